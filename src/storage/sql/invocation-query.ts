import type { SelectQueryBuilder } from 'kysely';
import type { InvocationQuery } from '../../invocation/index.js';
import type { Tables } from '../schema/tables.js';

/**
 * The tenant's invocations `query` asks for, newest first, as one select both backends run: every
 * filter is a comparison on a lookup column (the tenant always), so an agent's narrowing to its own
 * calls (`principal`) holds under every other filter and the page boundary (`before`) alike.
 */
export function selectInvocations<O>(
  q: SelectQueryBuilder<Tables, 'invocations', O>,
  tenant: string,
  query: InvocationQuery,
): SelectQueryBuilder<Tables, 'invocations', O> {
  let s = q.where('tenant', '=', tenant);
  if (query.status !== undefined) s = s.where('status', '=', query.status);
  if (query.principal !== undefined) s = s.where('principal', '=', query.principal);
  if (query.tool !== undefined) {
    s =
      query.tool.version === undefined
        ? s.where('tool_name', '=', query.tool.id)
        : s.where('tool_id', '=', `${query.tool.id}@${query.tool.version}`);
  }
  if (query.agent !== undefined) s = s.where('agent_id', '=', query.agent);
  if (query.environment !== undefined) s = s.where('environment', '=', query.environment);
  // Instants compare as text: every stored one has the fixed form of Date.toISOString.
  if (query.from !== undefined) s = s.where('created_at', '>=', query.from);
  if (query.to !== undefined) s = s.where('created_at', '<', query.to);
  if (query.before !== undefined) s = s.where('id', '<', query.before);
  return s.orderBy('id', 'desc').limit(query.limit);
}
