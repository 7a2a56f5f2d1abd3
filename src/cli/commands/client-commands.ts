import type { Command } from 'commander';
import { GatehouseClient } from '../client.js';
import { readInput, readJson } from '../input.js';
import { print, withJson } from '../output.js';

/** `events publish`, `policy get|set`. */
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
