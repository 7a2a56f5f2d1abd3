import type { Command } from 'commander';
import { GatehouseClient } from '../client.js';
import { print, withJson } from '../output.js';

interface ApprovalView {
  id: string;
  status: string;
  tool: { id: string; version: string };
  environment: string;
  effectiveClass: string;
  invocationId: string;
  expiresAt: string;
  quorum: number;
  decisions: { decision: string }[];
}

interface InvocationView {
  id: string;
  status: string;
  tool: { id: string; version: string };
  environment: string;
  error?: { code: string; message: string };
}

/** `approvals list|approve|reject` and `uncertain list|confirm|deny`. */
export function approvalCommands(program: Command): void {
  const client = () => new GatehouseClient();
  const approvals = program.command('approvals').description('approval requests of gated calls');
  withJson(
    approvals
      .command('list')
      .description('list approval requests (pending by default)')
      .option(
        '--status <status>',
        'pending, approved, rejected, expired, consumed, invalidated or all',
        'pending',
      ),
  ).action(async (opts: { status: string; json?: boolean }) => {
    const q = opts.status === 'all' ? '' : `?status=${encodeURIComponent(opts.status)}`;
    const { body } = await client().request('GET', `/v1/approvals${q}`);
    if (opts.json) return print(body);
    const { approvals: list } = body as { approvals: ApprovalView[] };
    if (list.length === 0) print(`no ${opts.status === 'all' ? '' : `${opts.status} `}approvals`);
    for (const a of list) {
      const approvalsSoFar = a.decisions.filter((d) => d.decision === 'approve').length;
      print(
        `${a.id}  ${a.status.padEnd(9)} ${`${a.tool.id}@${a.tool.version}`.padEnd(28)} ${a.environment.padEnd(8)} ${a.effectiveClass.padEnd(14)} ${approvalsSoFar}/${a.quorum}  expires ${a.expiresAt}  invocation ${a.invocationId}`,
      );
    }
  });
  approvals
    .command('show <id>')
    .description('print one approval request with the exact input it approves')
    .action(async (id: string) =>
      print((await client().request('GET', `/v1/approvals/${encodeURIComponent(id)}`)).body),
    );
  approvals
    .command('approve <id>')
    .option('--reason <text>', 'why', '')
    .description('approve a request (reviewers)')
    .action(async (id: string, opts: { reason: string }) => {
      const a = (
        await client().request('POST', `/v1/approvals/${encodeURIComponent(id)}/approve`, {
          reason: opts.reason,
        })
      ).body as ApprovalView;
      print(`approval ${a.id} is ${a.status}`);
    });
  approvals
    .command('reject <id>')
    .requiredOption('--reason <text>', 'why (shown to the agent)')
    .description('reject a request (reviewers)')
    .action(async (id: string, opts: { reason: string }) => {
      const a = (
        await client().request('POST', `/v1/approvals/${encodeURIComponent(id)}/reject`, {
          reason: opts.reason,
        })
      ).body as ApprovalView;
      print(`approval ${a.id} is ${a.status}`);
    });

  const uncertain = program
    .command('uncertain')
    .description('invocations whose effect is Uncertain');
  withJson(
    uncertain.command('list').description('list unresolved Uncertain invocations (operators)'),
  ).action(async (opts: { json?: boolean }) => {
    const { body } = await client().request('GET', '/v1/uncertain');
    if (opts.json) return print(body);
    const { invocations } = body as { invocations: InvocationView[] };
    if (invocations.length === 0) print('no uncertain invocations');
    for (const i of invocations)
      print(
        `${i.id}  ${`${i.tool.id}@${i.tool.version}`.padEnd(28)} ${i.environment.padEnd(8)} ${i.error?.message ?? ''}`,
      );
  });
  for (const [name, effect, what] of [
    ['confirm', 'confirmed', 'the effect happened'],
    ['deny', 'denied', 'the effect did not happen (a retry then runs as a new attempt)'],
  ] as const) {
    uncertain
      .command(`${name} <id>`)
      .requiredOption('--evidence <text>', 'what shows it (a link, a log line, a ticket)')
      .description(`record that ${what} (operators)`)
      .action(async (id: string, opts: { evidence: string }) => {
        const r = (
          await client().request('POST', `/v1/invocations/${encodeURIComponent(id)}/resolve`, {
            effect,
            evidence: opts.evidence,
          })
        ).body as InvocationView;
        print(`invocation ${r.id} is ${r.status}`);
      });
  }
}
