import type { Command } from 'commander';
import { GatehouseClient } from '../client.js';
import { readInput, readJson } from '../input.js';
import { print, withJson } from '../output.js';

/** `events publish`, `invocations get|list`, `policy get|set`. */
export function clientCommands(program: Command): void {
  const client = () => new GatehouseClient();

  withJson(
    program
      .command('events')
      .description('release events')
      .command('publish <file>')
      .description('apply release events from a JSON file (one event or an array); - reads stdin'),
  ).action(async (file: string, opts: { json?: boolean }) => {
    const { body } = await client().request('POST', '/v1/events', await readJson(file));
    if (opts.json) return print(body);
    for (const r of (
      body as { results: { id: string; type: string; result: string; message: string }[] }
    ).results)
      print(`${r.id}  ${r.type}  ${r.result}: ${r.message}`);
  });

  const invocations = program.command('invocations').description('invocation records');
  invocations
    .command('get <id>')
    .description('print an invocation record with its trace, as JSON')
    .action(async (id: string) =>
      print((await client().request('GET', `/v1/invocations/${encodeURIComponent(id)}`)).body),
    );
  withJson(
    invocations
      .command('list')
      .option('--status <status>', 'only this status')
      .option('--limit <n>', 'at most this many (default 50, max 500)')
      .description("list the tenant's invocations, newest first"),
  ).action(async (opts: { status?: string; limit?: string; json?: boolean }) => {
    const q = new URLSearchParams({
      ...(opts.status ? { status: opts.status } : {}),
      ...(opts.limit ? { limit: opts.limit } : {}),
    }).toString();
    const { body } = await client().request('GET', `/v1/invocations${q ? `?${q}` : ''}`);
    if (opts.json) return print(body);
    const list = (
      body as {
        invocations: {
          id: string;
          status: string;
          tool: { id: string; version: string };
          environment: string;
          createdAt: string;
          error?: { code: string };
        }[];
      }
    ).invocations;
    if (list.length === 0) print('no invocations');
    for (const i of list)
      print(
        `${i.id}  ${i.status.padEnd(17)} ${`${i.tool.id}@${i.tool.version}`.padEnd(32)} ${i.environment.padEnd(8)} ${i.createdAt}${i.error ? `  ${i.error.code}` : ''}`,
      );
  });

  const policy = program.command('policy').description('Cedar policy of the tenant or a project');
  const policyPath = (project?: string) =>
    project ? `/v1/policies/projects/${encodeURIComponent(project)}` : '/v1/policies/tenant';
  policy
    .command('get')
    .description('print the Cedar policy text')
    .option('--project <project>', 'a project instead of the tenant')
    .action(async (opts: { project?: string }) => {
      print(
        ((await client().request('GET', policyPath(opts.project))).body as { text: string }).text,
      );
    });
  policy
    .command('set <file>')
    .description('replace the policy with the Cedar text in FILE (- reads stdin)')
    .option('--project <project>', 'a project instead of the tenant')
    .action(async (file: string, opts: { project?: string }) => {
      print(
        (await client().request('PUT', policyPath(opts.project), { text: await readInput(file) }))
          .body,
      );
    });
}
