import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';
import type { McpStreamEventStore } from '../../tenancy/index.js';

/**
 * The SDK transport's event store for one session: what the session's streams send is kept in
 * the gateway's {@link McpStreamEventStore} under the session's id, so a client whose stream
 * dropped may resume it with `Last-Event-ID`, on this node or (with the shared store) another.
 * An event id of another session, or one expired, is unknown here: the transport refuses it.
 */
export function sessionEventStore(
  store: McpStreamEventStore,
  sessionId: () => string | undefined,
  onError: (err: unknown) => void,
): EventStore {
  let unkept = 0;
  const session = (): string => {
    const id = sessionId();
    // The transport stores events only once the session has its id (after initialize).
    if (id === undefined) throw new Error('MCP session has no id yet');
    return id;
  };
  return {
    // An event that could not be kept (the database out of reach) is still sent, live, under an
    // id no store knows: resuming from it is refused, and the client starts over.
    storeEvent: async (streamId, message) => {
      try {
        return await store.append(session(), streamId, JSON.stringify(message));
      } catch (err) {
        onError(err);
        return `unkept-${++unkept}`;
      }
    },
    getStreamIdForEventId: (eventId) => store.streamOf(session(), eventId),
    replayEventsAfter: async (lastEventId, { send }) => {
      const id = session();
      const streamId = await store.streamOf(id, lastEventId);
      if (streamId === undefined) throw new Error('unknown event id');
      for (const e of await store.after(id, lastEventId)) {
        const message = JSON.parse(e.message) as Partial<JSONRPCMessage>;
        // A priming event (empty) only gave the client an id to resume from: not sent again.
        if (message.jsonrpc === undefined) continue;
        await send(e.id, message as JSONRPCMessage);
      }
      return streamId;
    },
  };
}
