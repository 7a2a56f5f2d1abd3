import { useEffect, useState } from 'preact/hooks';
import { EventType } from '../../src/core/events.js';

/** One event of `GET /v1/events/stream`. */
export interface LiveEvent {
  id: number;
  type: string;
  subject: string;
  at: string;
  data: Record<string, unknown>;
}

/** Whether the event stream is connected. */
export type LiveState = 'connecting' | 'live' | 'reconnecting';

type Listener = (e: LiveEvent) => void;

/** Every event type the gateway emits: the server's own list (src/core/events.ts imports nothing). */
const TYPES = Object.values(EventType);

const listeners = new Set<Listener>();
/** Called each time the stream opens, since events before it (or while it was down) were missed. */
const openListeners = new Set<() => void>();
const stateListeners = new Set<(s: LiveState) => void>();
let source: EventSource | null = null;
let state: LiveState = 'connecting';

function setState(s: LiveState): void {
  state = s;
  for (const f of stateListeners) f(s);
}

/**
 * Opens the one event stream of this page (same origin, the session cookie authenticates it).
 * EventSource reconnects by itself and resumes after the last event id it saw.
 */
export function startLive(): void {
  if (source) return;
  source = new EventSource('/v1/events/stream');
  source.onopen = () => {
    setState('live');
    for (const f of openListeners) f();
  };
  source.onerror = () => setState('reconnecting');
  for (const type of TYPES) {
    source.addEventListener(type, (m: MessageEvent<string>) => {
      const e = JSON.parse(m.data) as LiveEvent;
      for (const f of listeners) f(e);
    });
  }
}

/** Closes the stream (on sign-out). Safe to repeat. */
export function stopLive(): void {
  source?.close();
  source = null;
  setState('connecting');
}

/**
 * Calls `f` for each event whose type is in `types`, while the component is mounted, and with no
 * event each time the stream (re)opens: whatever changed between a component's first load and the
 * stream's start, or while it reconnected, reached no listener, so `f` must read afresh.
 */
export function useLiveEvents(types: readonly string[], f: (e?: LiveEvent) => void): void {
  useEffect(() => {
    if (types.length === 0) return;
    const l: Listener = (e) => {
      if (types.includes(e.type)) f(e);
    };
    const opened = () => f();
    listeners.add(l);
    openListeners.add(opened);
    return () => {
      listeners.delete(l);
      openListeners.delete(opened);
    };
  }, [types, f]);
}

/** The stream's connection state, kept current. */
export function useLiveState(): LiveState {
  const [s, set] = useState(state);
  useEffect(() => {
    stateListeners.add(set);
    return () => void stateListeners.delete(set);
  }, []);
  return s;
}
