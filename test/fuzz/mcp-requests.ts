import fc from 'fast-check';
import type { Pools } from './rest-requests.js';
import { word } from './rest-requests.js';

/** One request to `/mcp`, before the session header is chosen. */
export interface McpFuzzRequest {
  method: 'POST' | 'GET' | 'DELETE';
  /** `valid`: the run's open session; `none`: no header; otherwise sent as is. */
  session: string;
  token: string;
  protocolVersion?: string;
  accept: string;
  body?: Buffer;
}

const PROTOCOL_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05', '2099-01-01', '', 'x'];

/** JSON-RPC ids: the allowed ones and every kind that is not. */
const id = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 10 }),
  fc.constantFrom(null, 1.5, -1, 2 ** 60, true, {}, [], 'x'.repeat(300)),
);

/** JSON-RPC messages: the MCP methods with good and bad params, notifications, responses. */
function message(pools: Pools, toolNames: string[]): fc.Arbitrary<unknown> {
  const method = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'initialize',
        'tools/list',
        'tools/call',
        'resources/list',
        'resources/read',
        'resources/templates/list',
        'prompts/list',
        'prompts/get',
        'ping',
        'completion/complete',
        'logging/setLevel',
      ),
    },
    { weight: 1, arbitrary: word(pools) },
  );
  const params = fc.oneof(
    fc.record({
      name: fc.oneof(fc.constantFrom(...toolNames), word(pools)),
      arguments: fc.oneof(
        fc.record({ message: word(pools) }),
        fc.record({ title: word(pools), diff: word(pools) }),
        fc.jsonValue({ maxDepth: 3 }),
      ),
      _meta: fc.oneof(
        fc.record({ approvalId: word(pools), idempotencyKey: word(pools) }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    }),
    fc.record({
      protocolVersion: fc.constantFrom(...PROTOCOL_VERSIONS),
      capabilities: fc.jsonValue({ maxDepth: 2 }),
      clientInfo: fc.record({ name: word(pools), version: word(pools) }),
    }),
    fc.record({ uri: word(pools), cursor: word(pools) }),
    fc.jsonValue({ maxDepth: 4 }),
    fc.constant({ pad: 'p'.repeat(200_000) }),
  );
  const request = fc.record(
    { jsonrpc: fc.oneof(fc.constant('2.0'), fc.constantFrom('1.0', 2, null)), id, method, params },
    { requiredKeys: ['method'] },
  );
  const response = fc.record({
    jsonrpc: fc.constant('2.0'),
    id,
    result: fc.jsonValue({ maxDepth: 2 }),
  });
  const single = fc.oneof({ weight: 8, arbitrary: request }, { weight: 1, arbitrary: response });
  return fc.oneof(
    { weight: 8, arbitrary: single },
    { weight: 1, arbitrary: fc.array(single, { maxLength: 5 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

/** Bodies: a message as JSON most of the time, else text that breaks JSON or its rules. */
function body(pools: Pools, toolNames: string[]): fc.Arbitrary<Buffer> {
  return fc
    .oneof(
      { weight: 10, arbitrary: message(pools, toolNames).map((m) => JSON.stringify(m) ?? 'null') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '',
          '{',
          '{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
          '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"x":1}}}',
          '[]',
        ),
      },
    )
    .map((t) => Buffer.from(t));
}

/** Requests to `/mcp` from agents and others, in and out of sessions. */
export function mcpRequest(
  pools: Pools,
  agentToken: string,
  toolNames: string[],
): fc.Arbitrary<McpFuzzRequest> {
  return fc
    .record(
      {
        method: fc.oneof(
          { weight: 12, arbitrary: fc.constant('POST' as const) },
          fc.constantFrom('GET' as const, 'DELETE' as const),
        ),
        session: fc.oneof(
          { weight: 6, arbitrary: fc.constant('valid') },
          { weight: 2, arbitrary: fc.constant('none') },
          { weight: 1, arbitrary: fc.oneof(fc.uuid(), fc.string({ maxLength: 20 })) },
        ),
        token: fc.oneof(
          { weight: 6, arbitrary: fc.constant(agentToken) },
          { weight: 1, arbitrary: fc.constantFrom(...Object.values(pools.tokens), 'nope') },
        ),
        protocolVersion: fc.constantFrom(...PROTOCOL_VERSIONS),
        accept: fc.constantFrom(
          'application/json, text/event-stream',
          'application/json, text/event-stream',
          'application/json',
          'text/event-stream',
          '*/*',
        ),
        body: body(pools, toolNames),
      },
      { requiredKeys: ['method', 'session', 'token', 'accept'] },
    )
    .map((r) => Object.assign(r, { [fc.toStringMethod]: () => describeMcp(r) }));
}

/** A request to /mcp as one line, its body cut. */
export function describeMcp(r: McpFuzzRequest): string {
  const body = r.body?.toString('utf8');
  const shown = body && body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body;
  return `${r.method} /mcp session=${r.session} version=${r.protocolVersion ?? '-'} accept=${r.accept} body=${shown ?? '-'}`;
}
