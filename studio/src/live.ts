import { useEffect, useState } from 'preact/hooks';

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

const TYPES = [
  'ToolInvocationRequested',
  'ToolInvocationDenied',
  'ApprovalRequested',
  'ApprovalDecided',
  'ToolInvocationCompleted',
  'ToolEffectUncertain',
  'ToolEffectResolved',
  'DescriptorActivated',
  'DescriptorRetired',
  'McpServerStateChanged',
  'McpToolUnbound',
];

const listeners = new Set<Listener>();
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
  source.onopen = () => setState('live');
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

/** Calls `f` for each event whose type is in `types`, while the component is mounted. */
export function useLiveEvents(types: readonly string[], f: (e: LiveEvent) => void): void {
  useEffect(() => {
    const l: Listener = (e) => {
      if (types.includes(e.type)) f(e);
    };
    listeners.add(l);
    return () => void listeners.delete(l);
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
