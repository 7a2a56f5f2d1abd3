import { describe, expect, it } from 'vitest';
import type { OutboxFeed, StoredEvent } from '../../../src/core/index.js';
import { EventStreamHub } from '../../../src/http/event-stream-hub.js';
import { DEFAULT_STREAM_LIMITS } from '../../../src/http/event-stream-limits.js';
import { LiveSessions } from '../../../src/http/mcp-endpoint/live-sessions.js';
import type { LiveSession } from '../../../src/http/mcp-endpoint/live-sessions.js';
import type { McpServerRecord, McpWatcher } from '../../../src/mcp/index.js';

// The logic of an MCP node's live sessions with fakes (the real path, with a gateway and
// server-everything, is test/e2e/mcp-notifications): it follows the outbox through the event
// stream hub's one shared read, and asks a reconnected upstream again for what its sessions asked.

/** An outbox in memory; `commit` adds an event and tells the subscribers. */
function memoryFeed(): OutboxFeed & { commit(e: Omit<StoredEvent, 'seq'>): void; reads: number } {
  const events: StoredEvent[] = [];
  const listeners = new Set<() => void>();
  return {
    reads: 0,
    after: (tenant, seq, limit) =>
      Promise.resolve(events.filter((e) => e.tenant === tenant && e.seq > seq).slice(0, limit)),
    latest: (tenant) => Promise.resolve(events.filter((e) => e.tenant === tenant).at(-1)?.seq ?? 0),
    since(seq, limit) {
      this.reads += 1;
      return Promise.resolve(events.filter((e) => e.seq > seq).slice(0, limit));
    },
    head: () => Promise.resolve(events.at(-1)?.seq ?? 0),
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    commit(e) {
      events.push({ ...e, seq: events.length + 1 });
      for (const l of listeners) l();
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 10));

function session(tenant: string, reaches: boolean, notified: string[]): LiveSession {
  let n = 0;
  return {
    tenant,
    // Each check sees another list, so each check after a tool event tells the session.
    tools: () => Promise.resolve(String(n++)),
    reaches: () => Promise.resolve(reaches),
    notify: (method) => {
      notified.push(method);
      return Promise.resolve();
    },
    level: null,
    subscribed: new Set(),
  };
}

describe('LiveSessions', () => {
  it("follows the outbox through the hub's shared read, only while sessions are open", async () => {
    const feed = memoryFeed();
    const hub = new EventStreamHub({ feed, limits: DEFAULT_STREAM_LIMITS });
    const live = new LiveSessions({
      events: (l) => hub.listen(l),
      subscribe: () => Promise.resolve(),
      onError: (err) => {
        throw err;
      },
    });
    const notified: string[] = [];
    const remove = live.add(session('acme', true, notified));
    await settle();
    const event = { tenant: 'acme', subject: 's', at: '', data: {}, owner: null } as const;
    feed.commit({ ...event, id: 'e1', type: 'DescriptorActivated' } as never);
    await settle();
    expect(notified).toEqual(['notifications/tools/list_changed']);
    // One read of the commit, by the hub, for every listener and stream.
    expect(feed.reads).toBe(1);
    remove();
    feed.commit({ ...event, id: 'e2', type: 'DescriptorActivated' } as never);
    await settle();
    expect(feed.reads).toBe(1);
    expect(notified).toHaveLength(1);
  });

  it('subscribes again and sets the level of the sessions that reach a reconnected server', async () => {
    let watcher: McpWatcher = {};
    const asked: string[] = [];
    const live = new LiveSessions({
      events: () => () => undefined,
      subscribe: (tenant, server, uri, on) => {
        asked.push(`${on ? 'subscribe' : 'unsubscribe'} ${tenant} ${server} ${uri}`);
        return Promise.resolve();
      },
      setLevel: (tenant, server, level) => {
        asked.push(`level ${tenant} ${server} ${level}`);
        return Promise.resolve();
      },
      watchUpstreams: (w) => {
        watcher = w;
        return () => undefined;
      },
      onError: (err) => {
        throw err;
      },
    });
    const reaching = session('acme', true, []);
    const elsewhere = session('acme', false, []);
    live.add(reaching);
    live.add(elsewhere);
    reaching.level = 'warning';
    // A more detailed level, of a session that does not reach the server: not asked of it.
    elsewhere.level = 'debug';
    await live.subscribe(reaching, 'srv1', 'demo://a');
    await live.subscribe(reaching, 'srv2', 'demo://b');
    asked.length = 0;
    watcher.connected!({ id: 'srv1', tenant: 'acme', name: 'one' } as McpServerRecord);
    await settle();
    expect(asked.sort()).toEqual(['level acme srv1 warning', 'subscribe acme srv1 demo://a']);
  });
});
