import { ErrorCode, GatehouseError } from '../../core/index.js';
import { ApprovalStatus } from '../../approvals/index.js';
import type { ApprovalStatus as Status } from '../../approvals/index.js';
import { MAX_REASON_FIELD, objectBody, optionalText } from '../request-parsing.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

const statuses = Object.values(ApprovalStatus) as string[];

/** Approval requests: list, read, approve, reject. */
export function approvalRoutes(s: GatewayServices): Route[] {
  const decide =
    (decision: 'approve' | 'reject'): Route['handler'] =>
    async (principal, req) => {
      const body =
        req.body === undefined || req.body === null
          ? {}
          : objectBody(req.body, `POST /v1/approvals/:id/${decision}`);
      const reason = optionalText(body, 'reason', MAX_REASON_FIELD);
      if (decision === 'reject' && (reason === undefined || reason.trim() === '')) {
        throw new GatehouseError(
          ErrorCode.INVALID_INPUT,
          '/reason is required to reject: say why, so the agent and its owner can act on it.',
          { details: { pointer: '/reason' } },
        );
      }
      const id = (req.params as { id: string }).id;
      const seen = body.requestHash;
      if (seen !== undefined && typeof seen !== 'string') {
        throw new GatehouseError(ErrorCode.INVALID_INPUT, '/requestHash must be a string.', {
          details: { pointer: '/requestHash' },
        });
      }
      const approval = await s.approvals.decide(principal, id, decision, reason ?? '', seen);
      return { status: 200, body: approval };
    };
  const requestHash = {
    type: 'string',
    description:
      'the request hash the decider saw; when given, a decision on an approval bound to another hash is refused (409)',
  };
  const body = {
    type: 'object',
    properties: { reason: { type: 'string', maxLength: MAX_REASON_FIELD }, requestHash },
  };
  return [
    {
      method: 'GET',
      url: '/v1/approvals',
      tag: 'approvals',
      summary: "Your tenant's approval requests, newest first",
      query: { status: { type: 'string', description: `one of ${statuses.join(', ')}` } },
      responses: { '200': '{approvals: [...]}' },
      handler: async (principal, req, _reply, grant) => {
        const status = (req.query as { status?: string }).status;
        if (status !== undefined && !statuses.includes(status)) {
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            `Query parameter status must be one of ${statuses.join(', ')}.`,
          );
        }
        return {
          status: 200,
          body: {
            approvals: await s.approvals.list(
              principal.tenant,
              status as Status | undefined,
              grant.owner,
            ),
          },
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/approvals/:id',
      tag: 'approvals',
      summary:
        'One approval request: what it binds (request hash, tool version, descriptor digest), its input and decisions',
      responses: { '200': 'the approval', '404': 'no such approval in your tenant' },
      handler: async (principal, req, _reply, grant) => ({
        status: 200,
        body: await s.approvals.get(
          principal.tenant,
          (req.params as { id: string }).id,
          grant.owner,
        ),
      }),
    },
    {
      method: 'POST',
      url: '/v1/approvals/:id/approve',
      tag: 'approvals',
      summary: 'Approve (reviewers; never the requester of the call)',
      body,
      responses: {
        '200': 'the approval',
        '403': 'not allowed to decide',
        '404': 'no such approval',
        '409': 'already decided or expired',
      },
      handler: decide('approve'),
    },
    {
      method: 'POST',
      url: '/v1/approvals/:id/reject',
      tag: 'approvals',
      summary: 'Reject with a reason (reviewers)',
      body: {
        type: 'object',
        required: ['reason'],
        properties: { reason: { type: 'string', maxLength: MAX_REASON_FIELD }, requestHash },
      },
      responses: {
        '200': 'the approval',
        '403': 'not allowed to decide',
        '404': 'no such approval',
        '409': 'already decided or expired',
      },
      handler: decide('reject'),
    },
  ];
}
