import fc from 'fast-check';

/** One HTTP request a fuzz run sends. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body bytes, or none. */
  body?: Buffer;
}

/** An operation of `/openapi.json`: what the generators build requests from. */
export interface Operation {
  method: string;
  /** The OpenAPI path, with `{name}` parameters. */
  path: string;
  query: string[];
  body?: Record<string, unknown>;
  /** Roles allowed, from the operation's description (`Roles: a, b.`); empty when public. */
  roles: string[];
}

/** Values of the running gateway that make requests reach further than random text does. */
export interface Pools {
  /** Valid bearer tokens, by role. */
  tokens: Record<string, string>;
  /** Ids, names and versions that exist: invocations, approvals, servers, tools, projects. */
  words: string[];
  /** Tools that are quick to run (native ones), as `{id, version}`. */
  tools: { id: string; version: string }[];
}

/** The operations of an OpenAPI document. */
export function operationsOf(doc: {
  paths: Record<string, Record<string, Record<string, unknown>>>;
}): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = (op.parameters ?? []) as { name: string; in: string }[];
      const body = (
        op.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> }
      )?.content?.['application/json']?.schema;
      const description = typeof op.description === 'string' ? op.description : '';
      const roles = /Roles: ([\w, ]+)/.exec(description)?.[1];
      ops.push({
        method: method.toUpperCase(),
        path,
        query: params.filter((p) => p.in === 'query').map((p) => p.name),
        ...(body ? { body } : {}),
        roles: roles ? roles.split(/,\s*/) : [],
      });
    }
  }
  return ops;
}

/** Strings that have broken parsers before: empty, huge, control characters, escapes, paths. */
const nasty = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '..',
  '../../etc/passwd',
  '%00',
  '%',
  '%zz',
  '%2e%2e%2f',
  '\ud800',
  '😀',
  'a'.repeat(101),
  'x'.repeat(5000),
  '<script>',
  "' OR 1=1 --",
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'null',
  '-1',
  '1e400',
  'NaN',
);

/** A string: random, nasty, or one of the gateway's own words. */
export function word(pools: Pools): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...pools.words) },
    { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 2, arbitrary: nasty },
  );
}

/** Numbers at the edges: negative, zero, unsafe integers, fractions, large exponents. */
const edgeNumber = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e20, 1e308, -1e308, 0.5, 5e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A value for a JSON Schema: well-formed most of the time, of another type some of the time. */
export function valueFor(schema: unknown, pools: Pools, depth = 0): fc.Arbitrary<unknown> {
  const junk = fc.oneof(fc.jsonValue({ maxDepth: 2 }), edgeNumber, word(pools), fc.constant(null));
  if (typeof schema !== 'object' || schema === null || depth > 4) return junk;
  const s = schema as Record<string, unknown>;
  let good: fc.Arbitrary<unknown>;
  if (Array.isArray(s.enum)) good = fc.constantFrom(...(s.enum as unknown[]));
  else if (Array.isArray(s.oneOf))
    good = fc.oneof(...(s.oneOf as unknown[]).map((x) => valueFor(x, pools, depth + 1)));
  else
    switch (s.type) {
      case 'object': {
        const props = (s.properties ?? {}) as Record<string, unknown>;
        const shape = Object.fromEntries(
          Object.entries(props).map(([k, v]) => [k, valueFor(v, pools, depth + 1)]),
        );
        const required = ((s.required ?? []) as string[]).filter((k) => k in shape);
        good = fc
          .tuple(
            fc.record(shape, { requiredKeys: required }),
            fc.dictionary(word(pools), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
            fc.boolean(),
          )
          .map(([r, extra, withExtra]) => (withExtra ? { ...extra, ...r } : r));
        break;
      }
      case 'array':
        good = fc.array(valueFor(s.items, pools, depth + 1), { maxLength: 4 });
        break;
      case 'string':
        good = word(pools);
        break;
      case 'integer':
      case 'number':
        good = edgeNumber;
        break;
      case 'boolean':
        good = fc.boolean();
        break;
      default:
        good = fc.jsonValue({ maxDepth: 3 });
    }
  return fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: junk });
}

/** The body of `POST /v1/invocations`, aimed at tools that exist most of the time. */
function invocationBody(pools: Pools): fc.Arbitrary<unknown> {
  return fc.record(
    {
      tool: fc.oneof(fc.constantFrom(...pools.tools), valueFor({ type: 'object' }, pools)),
      input: fc.oneof(
        fc.record({ message: word(pools) }),
        fc.record({ title: word(pools), diff: word(pools), target: word(pools) }),
        fc.jsonValue({ maxDepth: 4 }),
      ),
      environment: fc.oneof(fc.constantFrom('dev', 'prod', 'freeze'), word(pools)),
      runId: word(pools),
      attemptId: word(pools),
      approvalId: word(pools),
    },
    { requiredKeys: ['tool', 'input', 'environment'] },
  );
}

/** A release event, mostly a publication of a descriptor shaped like the demo's. */
function releaseEvent(pools: Pools): fc.Arbitrary<unknown> {
  const version = fc.oneof(
    fc.tuple(fc.nat(20), fc.nat(20), fc.nat(1000)).map(([a, b, c]) => `${a}.${b}.${c}`),
    word(pools),
  );
  const schema = fc.oneof(
    fc.constant({ type: 'object', properties: { message: { type: 'string' } } }),
    fc.constantFrom(
      { type: 'object', properties: { s: { type: 'string', pattern: '(' } } },
      { $ref: 'http://example.invalid/schema.json' },
      { type: 'object', properties: { d: { type: 'string', format: 'no-such-format' } } },
      { type: 'nonsense' },
      { allOf: [{ $ref: '#/definitions/missing' }] },
    ),
    fc.jsonValue({ maxDepth: 3 }),
  );
  const descriptor = fc.record({
    id: fc.oneof(fc.constantFrom('fuzz/tool', 'demo/echo'), word(pools)),
    version,
    kind: fc.constantFrom('native', 'shell', 'mcp', 'http', 'unknown'),
    title: word(pools),
    description: fc.constant('a fuzzed tool'),
    inputSchema: schema,
    sideEffect: fc.record({
      class: fc.constantFrom('read', 'workspace-write', 'shared-write', 'production', 'x'),
    }),
    execution: fc.oneof(fc.constant({ handler: 'demo.echo' }), fc.jsonValue({ maxDepth: 2 })),
  });
  const data = fc.oneof(
    fc.record({
      assetId: fc.constantFrom('fuzz/tool', 'demo/echo'),
      version,
      descriptor,
      inFlightPolicy: fc.constantFrom('finish', 'abort'),
    }),
    fc.record({ assetId: fc.constantFrom('fuzz/tool', 'demo/echo'), version, reason: word(pools) }),
    fc.record({
      agentId: word(pools),
      version,
      closure: fc.array(fc.constantFrom(...pools.tools), { maxLength: 3 }),
      policy: fc.record({ maxClass: fc.constantFrom('read', 'production') }),
    }),
  );
  return fc.record(
    {
      id: fc.uuid(),
      type: fc.constantFrom(
        'AssetReleasePublished',
        'AssetReleaseDeprecated',
        'AssetReleaseRevoked',
        'AgentReleasePublished',
      ),
      sequence: fc.oneof(fc.nat(), edgeNumber),
      data,
    },
    { requiredKeys: ['id', 'type', 'data'] },
  );
}

/** Tokens that are valid JSON text but not I-JSON, or that nest too deep, to plant in a body. */
const PLANTS = [
  '1e400',
  '-1E+999',
  '1e-400',
  '123456789012345678901234567890',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`,
  '{"k":1,"k":2}',
  '{"__proto__":{"polluted":true}}',
  '"\\ud800"',
  '"\\u0000"',
];
const PLACEHOLDER = '@@plant@@';

/** JSON of `value` with one of its members or items replaced by a planted token. */
function planted(value: unknown, at: number, token: string): string {
  const slots: [Record<string, unknown> | unknown[], string | number][] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        slots.push([v, i]);
        walk(x);
      });
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        slots.push([v as Record<string, unknown>, k]);
        walk(x);
      }
    }
  };
  const copy = JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
  walk(copy);
  if (slots.length === 0) return token;
  const [container, key] = slots[at % slots.length]!;
  (container as Record<string | number, unknown>)[key] = PLACEHOLDER;
  return (JSON.stringify(copy) ?? 'null').replace(`"${PLACEHOLDER}"`, token);
}

/** Bodies as bytes: JSON of a value, or text that breaks one rule of JSON or of its encoding. */
function bodyBytes(value: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer | undefined> {
  const deep = (n: number) => `{"input":${'['.repeat(n)}${']'.repeat(n)}}`;
  return fc
    .oneof(
      { weight: 10, arbitrary: value.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(value, fc.nat(), fc.constantFrom(...PLANTS))
          .map(([v, at, token]) => Buffer.from(planted(v, at, token))),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          undefined,
          '',
          '{',
          '{"a":1e400}',
          '{"sequence":-1e999,"input":{"n":1E400}}',
          deep(10_000),
          deep(65),
          '{"a":1,"a":2}',
          '{"__proto__":{"polluted":1}}',
          '{"constructor":{"prototype":{"polluted":1}}}',
          '\ufeff{}',
          'null',
          '[]',
          '"text"',
          `{"pad":"${'x'.repeat(1_100_000)}"}`,
          `[${'1,'.repeat(200_000)}1]`,
        ),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(value, fc.uint8Array({ minLength: 1, maxLength: 8 }))
          .map(([v, bytes]) =>
            Buffer.concat([Buffer.from(JSON.stringify(v) ?? 'null'), Buffer.from(bytes)]),
          ),
      },
    )
    .map((b) => (typeof b === 'string' ? Buffer.from(b) : b));
}

/** Headers: a token of a role the operation allows (or another, or a broken one), and more. */
function headers(op: Operation, pools: Pools): fc.Arbitrary<Record<string, string>> {
  const all = Object.values(pools.tokens);
  const allowed = op.roles.map((r) => pools.tokens[r]).filter((t) => t !== undefined);
  const auth = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.constantFrom(...(allowed.length > 0 ? allowed : all)).map((t) => `Bearer ${t}`),
    },
    { weight: 3, arbitrary: fc.constantFrom(...all).map((t) => `Bearer ${t}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Basic YTpi',
        'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
        `Bearer ${'t'.repeat(600)}`,
        'bearer wrong-token',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((t) => `Bearer ${t}`) },
  );
  const contentType = fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    '',
  );
  return fc
    .record(
      {
        authorization: auth,
        'content-type': contentType,
        'idempotency-key': fc.oneof(word(pools), fc.uuid()),
        'last-event-id': word(pools),
        accept: fc.constantFrom('application/json', '*/*', 'text/event-stream', 'x/y'),
        'x-odd': fc.string({ maxLength: 40 }),
      },
      { requiredKeys: ['authorization', 'content-type'] },
    )
    .map(
      (h) =>
        // Node refuses to send header values with control characters; a client cannot either.
        Object.fromEntries(
          Object.entries(h).filter(([, v]) => /^[\t\x20-\x7e\x80-\xff]*$/.test(v)),
        ) as Record<string, string>,
    );
}

/** `encodeURIComponent`, except that a lone surrogate becomes the (invalid UTF-8) bytes of one. */
export function encodeLoose(text: string): string {
  return Array.from(text)
    .map((ch) => {
      try {
        return encodeURIComponent(ch);
      } catch {
        return '%ED%A0%80';
      }
    })
    .join('');
}

/** A path with its parameters filled: existing ids, random words, escapes, over-long segments. */
function pathFor(op: Operation, pools: Pools): fc.Arbitrary<string> {
  const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const segment = fc.oneof(
    { weight: 4, arbitrary: word(pools).map((w) => encodeLoose(w)) },
    { weight: 1, arbitrary: fc.constantFrom('%00', '..', '%2e%2e', '%zz', '%', 'a'.repeat(150)) },
  );
  return fc
    .tuple(fc.array(segment, { minLength: names.length, maxLength: names.length }))
    .map(([values]) => {
      let i = 0;
      return op.path.replace(/\{\w+\}/g, () => values[i++] ?? '');
    });
}

/** A query string from the operation's parameters, with arrays for scalars now and then. */
function queryFor(op: Operation, pools: Pools): fc.Arbitrary<string> {
  const names = [...op.query, 'status', 'after', 'limit'];
  const value = fc.oneof(
    edgeNumber.map(String),
    word(pools).map((w) => encodeLoose(w)),
    fc.constantFrom('', 'pending', 'running', '1', '0'),
  );
  return fc
    .array(fc.tuple(fc.constantFrom(...names), value), { maxLength: 4 })
    .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];

/** Requests over every operation, mostly with its own method, its body schema and real values. */
export function restRequest(ops: Operation[], pools: Pools): fc.Arbitrary<FuzzRequest> {
  // The operations that take rich bodies are drawn more often: they reach the most code.
  const weighted = ops.flatMap((op) =>
    op.method === 'POST' && (op.path === '/v1/invocations' || op.path === '/v1/events')
      ? Array<Operation>(8).fill(op)
      : op.body
        ? [op, op]
        : [op],
  );
  return fc
    .constantFrom(...weighted)
    .chain((op) =>
      fc.record({
        method: fc.oneof(
          { weight: 9, arbitrary: fc.constant(op.method) },
          fc.constantFrom(...METHODS),
        ),
        path: pathFor(op, pools),
        query: queryFor(op, pools),
        headers: headers(op, pools),
        body: bodyBytes(bodyFor(op, pools)),
      }),
    )
    .map(({ method, path, query, headers: h, body }) => {
      const r: FuzzRequest = {
        method,
        url: `${path}${query}`,
        headers: h,
        ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body } : {}),
      };
      // A counterexample prints as a request, its body cut, not as a buffer of numbers.
      return Object.assign(r, { [fc.toStringMethod]: () => describeRequest(r) });
    });
}

/** A request as one line: method, URL, headers and the start of the body. */
export function describeRequest(r: FuzzRequest): string {
  const body = r.body?.toString('utf8');
  const shown = body && body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body;
  return `${r.method} ${r.url.slice(0, 200)} ${JSON.stringify(r.headers).slice(0, 300)} body=${shown ?? '-'}`;
}

/** The values a body is made of: the operation's schema, or a richer model for the main ones. */
function bodyFor(op: Operation, pools: Pools): fc.Arbitrary<unknown> {
  if (op.method !== 'POST') return valueFor(op.body, pools);
  if (op.path === '/v1/invocations') return invocationBody(pools);
  if (op.path === '/v1/events')
    return fc.oneof(releaseEvent(pools), fc.array(releaseEvent(pools), { maxLength: 3 }));
  return valueFor(op.body, pools);
}
