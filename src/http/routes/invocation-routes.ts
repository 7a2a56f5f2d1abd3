import { ErrorCode, GatehouseError, cutText, isGatehouseError } from '../../core/index.js';
import { invocationStatusCode } from '../error-status.js';
import { INVOCATION_FILTER_PARAMETERS, invocationQuery } from '../invocation-filters.js';
import {
  IDEMPOTENCY_KEY,
  objectBody,
  objectMember,
  optionalString,
  stringField,
} from '../request-parsing.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/** `POST /v1/invocations` and reading invocations and receipts. */
export function invocationRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'POST',
      url: '/v1/invocations',
      tag: 'invocations',
      summary: 'Invoke a tool version through the governed pipeline',
      headers: {
        'Idempotency-Key': {
          description: 'Chosen by the caller; the same key and request is the same invocation.',
          required: true,
        },
      },
      body: {
        type: 'object',
        required: ['tool', 'input', 'environment'],
        properties: {
          tool: {
            type: 'object',
            properties: { id: { type: 'string' }, version: { type: 'string' } },
          },
          input: {},
          environment: { type: 'string' },
          runId: { type: 'string' },
          attemptId: { type: 'string' },
          approvalId: { type: 'string' },
        },
      },
      responses: {
        '200': 'the invocation record, outcome decided',
        '202': 'the invocation record, awaiting approval or running',
        '403': 'the invocation record, denied',
        '409': 'a retry of an unresolved Uncertain request',
        '422': 'the invocation record denied by validation, or the key reused for another request',
      },
      handler: async (principal, req) => {
        const key = req.headers['idempotency-key'];
        if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
          throw new GatehouseError(
            ErrorCode.IDEMPOTENCY_KEY_REQUIRED,
            key === undefined
              ? 'Header Idempotency-Key is required: choose a unique key per request and reuse it when you retry.'
              : 'Header Idempotency-Key must be 1–255 printable ASCII characters without spaces.',
          );
        }
        const body = objectBody(req.body, 'POST /v1/invocations');
        const tool = objectMember(body, 'tool', '{"id": …, "version": …}');
        if (!('input' in body))
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            '/input is required (the tool input, as its input schema asks).',
            { details: { pointer: '/input' } },
          );
        const record = await s.invocations.invoke(principal, {
          tool: {
            id: stringField(tool, 'id', '/tool/id'),
            version: stringField(tool, 'version', '/tool/version'),
          },
          input: body.input,
          environment: stringField(body, 'environment'),
          idempotencyKey: key,
          ...optionals(body),
          telemetry: { log: req.log, ...(req.traceParent ? { parent: req.traceParent } : {}) },
        });
        return { status: invocationStatusCode(record), body: record };
      },
    },
    {
      method: 'GET',
      url: '/v1/invocations',
      tag: 'invocations',
      summary:
        "List the tenant's invocations, newest first (agents see their own), filtered and paged by cursor",
      query: INVOCATION_FILTER_PARAMETERS,
      responses: {
        '200':
          '{invocations: [...], nextCursor}: nextCursor (null on the last page) is the cursor of the next page',
        '400': 'a filter is malformed (details.parameter names it)',
      },
      handler: async (principal, req, _reply, grant) => {
        const query = invocationQuery(req.query);
        // A cursor is the id of a call an earlier page showed this caller; any other text would
        // page from an arbitrary point (`zzz` sorts after every id) and look like a real page.
        const cursor = query.before;
        if (cursor !== undefined)
          await s.invocations.get(principal.tenant, cursor, grant.owner).catch((err) => {
            throw isGatehouseError(err, ErrorCode.NOT_FOUND)
              ? new GatehouseError(
                  ErrorCode.INVALID_INPUT,
                  `Query parameter cursor names no invocation you can see; pass the nextCursor of an earlier answer, unchanged, or leave it out for the first page; got ${JSON.stringify(cutText(cursor, 80))}.`,
                  { details: { parameter: 'cursor' } },
                )
              : err;
          });
        // One more than the page tells whether another page follows.
        const found = await s.invocations.list(principal.tenant, grant.owner, {
          ...query,
          limit: query.limit + 1,
        });
        const invocations = found.slice(0, query.limit);
        const last = invocations[invocations.length - 1];
        const nextCursor = found.length > query.limit && last ? last.id : null;
        return { status: 200, body: { invocations, nextCursor } };
      },
    },
    {
      method: 'GET',
      url: '/v1/invocations/:id',
      tag: 'invocations',
      summary: 'Read an invocation record with its trace',
      responses: { '200': 'the invocation record', '404': 'no such invocation in your tenant' },
      handler: async (principal, req, _reply, grant) => ({
        status: 200,
        body: await s.invocations.get(
          principal.tenant,
          (req.params as { id: string }).id,
          grant.owner,
        ),
      }),
    },
    {
      method: 'GET',
      url: '/v1/invocations/:id/receipt',
      tag: 'evidence',
      summary: 'The signed receipt (DSSE envelope of an in-toto Statement) of a decided invocation',
      responses: {
        '200': 'a DSSE envelope',
        '404': 'no such invocation',
        '409': 'not decided yet',
      },
      handler: async (principal, req, _reply, grant) => ({
        status: 200,
        body: await s.invocations.receipt(
          principal.tenant,
          (req.params as { id: string }).id,
          grant.owner,
        ),
      }),
    },
  ];
}

function optionals(body: Record<string, unknown>): {
  runId?: string;
  attemptId?: string;
  approvalId?: string;
} {
  const out: { runId?: string; attemptId?: string; approvalId?: string } = {};
  for (const f of ['runId', 'attemptId', 'approvalId'] as const) {
    const v = optionalString(body, f);
    if (v === undefined) continue;
    if (f !== 'approvalId' && !IDEMPOTENCY_KEY.test(v))
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `/${f} must be 1–255 printable ASCII characters without spaces.`,
        { details: { pointer: `/${f}` } },
      );
    out[f] = v;
  }
  if ((out.runId === undefined) !== (out.attemptId === undefined))
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `/runId and /attemptId go together (the calls of one attempt share a workspace); give both or neither.`,
      { details: { pointer: out.runId === undefined ? '/runId' : '/attemptId' } },
    );
  return out;
}
