import type { Command } from 'commander';
import { usageError } from '../cli-error.js';
import { GatehouseClient } from '../client.js';
import { print, withJson } from '../output.js';

interface TokenView {
  id: string;
  principal: { id: string; name: string; roles: string[] };
  label: string | null;
  status: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  replacedBy: string | null;
}

interface PrincipalView {
  id: string;
  name: string;
  roles: string[];
  project: string | null;
  agent: { id: string; version: string } | null;
}

interface ExpiryOptions {
  ttl?: string;
  expiresAt?: string;
  label?: string;
}

/** The `ttl`, `expiresAt` and `label` a command was given, as the request body wants them. */
function expiry(opts: ExpiryOptions): Record<string, string> {
  if (opts.ttl !== undefined && opts.expiresAt !== undefined)
    throw usageError('give --ttl or --expires-at, not both');
  return {
    ...(opts.ttl !== undefined ? { ttl: opts.ttl } : {}),
    ...(opts.expiresAt !== undefined ? { expiresAt: opts.expiresAt } : {}),
    ...(opts.label !== undefined ? { label: opts.label } : {}),
  };
}

function withExpiry(command: Command): Command {
  return command
    .option('--ttl <duration>', 'how long the token lives: 90d, 12h, 30m (default: the gateway’s)')
    .option('--expires-at <time>', 'or when it expires, ISO 8601');
}

/** One line per token: id, status, whose, expiry, last use, label. */
function tokenLine(t: TokenView): string {
  const whose = `${t.principal.name} (${t.principal.roles.join(',')})`;
  const status =
    t.status === 'active' && t.revokedAt !== null ? `active until ${t.revokedAt}` : t.status;
  return `${t.id}  ${status.padEnd(8)} ${whose.padEnd(28)} expires ${t.expiresAt}  last used ${t.lastUsedAt ?? 'never'}${t.label ? `  ${t.label}` : ''}`;
}

/**
 * `principals add|list` and `tokens list|create|revoke|rotate`: principals of the tenant and
 * their bearer tokens. Admins reach every token of the tenant; anyone lists, revokes and rotates
 * their own.
 */
export function accessCommands(program: Command): void {
  const client = () => new GatehouseClient();

  const principals = program.command('principals').description('principals of your tenant');
  withExpiry(
    principals
      .command('add <name>')
      .description(
        'create a principal with its first token and print both as JSON (the secret shown once; admins)',
      )
      .requiredOption('--role <role...>', 'agent (alone), or reviewer, operator, maintainer, admin')
      .option('--project <project>', 'for agents: the project')
      .option('--agent <release>', 'for agents: agentId@version of a published agent release')
      .option('--label <label>', 'where the token is used'),
  ).action(
    async (
      name: string,
      opts: { role: string[]; project?: string; agent?: string } & ExpiryOptions,
    ) => {
      const body = {
        name,
        roles: opts.role,
        ...(opts.project ? { project: opts.project } : {}),
        ...(opts.agent ? { agent: opts.agent } : {}),
        ...expiry(opts),
      };
      print((await client().request('POST', '/v1/principals', body)).body);
    },
  );
  withJson(
    principals.command('list').description('list principals: id, name, roles, project, agent'),
  ).action(async (opts: { json?: boolean }) => {
    const { body } = await client().request('GET', '/v1/principals');
    if (opts.json) return print(body);
    for (const p of (body as { principals: PrincipalView[] }).principals)
      print(
        `${p.id}  ${p.name.padEnd(24)} ${p.roles.join(',').padEnd(12)}${p.agent ? ` ${p.project ?? ''} ${p.agent.id}@${p.agent.version}` : ''}`,
      );
  });

  const tokens = program
    .command('tokens')
    .description('bearer tokens (admins: of the tenant; anyone: their own); never a secret');
  withJson(
    tokens
      .command('list')
      .description('list tokens, newest first: id, status, principal, expiry, last use, label')
      .option('--principal <id>', 'only the tokens of this principal'),
  ).action(async (opts: { principal?: string; json?: boolean }) => {
    const q = opts.principal ? `?principal=${encodeURIComponent(opts.principal)}` : '';
    const { body } = await client().request('GET', `/v1/tokens${q}`);
    if (opts.json) return print(body);
    const list = (body as { tokens: TokenView[] }).tokens;
    if (list.length === 0) print('no tokens');
    for (const t of list) print(tokenLine(t));
  });
  withExpiry(
    tokens
      .command('create')
      .description('make a token for a principal; prints it with its secret as JSON (once; admins)')
      .requiredOption('--principal <id>', 'the principal id (gatehouse principals list)')
      .option('--label <label>', 'where the token is used'),
  ).action(async (opts: { principal: string } & ExpiryOptions) => {
    const body = { principal: opts.principal, ...expiry(opts) };
    print((await client().request('POST', '/v1/tokens', body)).body);
  });
  tokens
    .command('revoke <id>')
    .description('revoke a token at once; its open event streams and MCP sessions are closed')
    .option('--reason <text>', 'why, for the audit log')
    .action(async (id: string, opts: { reason?: string }) => {
      const { body } = await client().request(
        'POST',
        `/v1/tokens/${encodeURIComponent(id)}/revoke`,
        opts.reason ? { reason: opts.reason } : {},
      );
      const t = body as TokenView;
      print(`token ${t.id} is ${t.status}${t.revokedAt ? ` (since ${t.revokedAt})` : ''}`);
    });
  withExpiry(
    tokens
      .command('rotate <id>')
      .description(
        'replace a token by a new one; prints the new token with its secret as JSON (once)',
      )
      .option('--overlap <seconds>', 'the old token keeps working this long (0–3600, default 0)'),
  ).action(async (id: string, opts: { overlap?: string } & ExpiryOptions) => {
    let overlap: number | undefined;
    if (opts.overlap !== undefined) {
      if (!/^\d{1,4}$/.test(opts.overlap))
        throw usageError(`--overlap takes whole seconds (0–3600); got ${opts.overlap}`);
      overlap = Number(opts.overlap);
    }
    const body = { ...expiry(opts), ...(overlap !== undefined ? { overlapSeconds: overlap } : {}) };
    print(
      (await client().request('POST', `/v1/tokens/${encodeURIComponent(id)}/rotate`, body)).body,
    );
  });
}
