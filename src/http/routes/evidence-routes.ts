import { requireOwnAuditRecord } from '../audit-ownership.js';
import { intParam } from '../request-parsing.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/** Receipt keys, checkpoints and proofs of the tenant's audit log. */
export function evidenceRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'GET',
      url: '/v1/receipt-keys',
      tag: 'evidence',
      summary: 'The public keys that sign receipts and checkpoints (JWK set), old keys included',
      responses: { '200': '{keys: [...]}' },
      handler: async () => ({ status: 200, body: await s.jwks() }),
    },
    {
      method: 'GET',
      url: '/v1/audit/checkpoint',
      tag: 'evidence',
      summary: "A signed tree head of your tenant's audit log",
      responses: { '200': '{tenant, treeSize, rootHash, timestamp, keyid, signature}' },
      handler: async (principal) => ({
        status: 200,
        body: await s.auditLog.checkpoint(principal.tenant),
      }),
    },
    {
      method: 'GET',
      url: '/v1/audit/proof',
      tag: 'evidence',
      summary: 'Inclusion proof of one audit record in the log, or in any earlier tree size',
      query: {
        index: { type: 'integer', description: 'the audit record index' },
        size: { type: 'integer', description: 'tree size (default: the whole log)' },
      },
      responses: {
        '200': '{index, treeSize, leafHash, rootHash, proof}',
        '400':
          'index or size not a non-negative integer, or out of range (the message names which)',
        '404': "(agents) not a record of the agent's own calls, or beyond the log",
      },
      handler: async (principal, req, _reply, grant) => {
        const q = req.query as Record<string, string | undefined>;
        const size = q.size === undefined ? undefined : intParam(q.size, 'size');
        const index = intParam(q.index, 'index');
        if (grant.owner !== null)
          await requireOwnAuditRecord(s, principal.tenant, index, grant.owner);
        return {
          status: 200,
          body: await s.auditLog.inclusion(principal.tenant, index, size),
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/audit/consistency',
      tag: 'evidence',
      summary: 'Consistency proof between two tree sizes of the log',
      query: {
        from: { type: 'integer', description: 'the earlier tree size' },
        to: { type: 'integer', description: 'the later tree size' },
      },
      responses: {
        '200': '{fromSize, toSize, fromRoot, toRoot, proof}',
        '400': 'from or to not a non-negative integer, or out of range (the message names which)',
      },
      handler: async (principal, req) => {
        const q = req.query as Record<string, string | undefined>;
        return {
          status: 200,
          body: await s.auditLog.consistency(
            principal.tenant,
            intParam(q.from, 'from'),
            intParam(q.to, 'to'),
          ),
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/audit/records/:index',
      tag: 'evidence',
      summary: 'One audit record, its exact leaf bytes and leaf hash',
      responses: {
        '200': '{index, record, leaf, leafHash}',
        '404': "beyond the log (agents: or not a record of the agent's own calls)",
      },
      handler: async (principal, req, _reply, grant) => {
        const index = intParam((req.params as { index: string }).index, 'index', undefined, 'path');
        if (grant.owner !== null)
          await requireOwnAuditRecord(s, principal.tenant, index, grant.owner);
        return { status: 200, body: await s.auditLog.record(principal.tenant, index) };
      },
    },
  ];
}
