import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { GatehouseClient } from '../client.js';
import { ExitCode } from '../exit-codes.js';
import { print, splitRef, withJson } from '../output.js';
import { importOpenApiCommand } from './import-openapi-command.js';

/** One descriptor version as `GET /v1/tools` lists it. */
interface ToolView {
  id: string;
  version: string;
  kind: string;
  class: string;
  state: string;
  stateReason: string | null;
  digest: string;
  publishedAt: string;
  descriptor: {
    title?: string;
    description: string;
    inputSchema: unknown;
    sideEffect: {
      class: string;
      rules?: {
        pointer: string;
        equals?: unknown;
        in?: unknown[];
        matches?: string;
        raiseTo: string;
        reason?: string;
      }[];
    };
    execution: unknown;
    sandbox?: unknown;
    credentials?: { ref: string; scope: string; inject: Record<string, unknown> }[];
    timeoutMs?: number;
  };
}

async function listTools(): Promise<ToolView[]> {
  return ((await new GatehouseClient().request('GET', '/v1/tools')).body as { tools: ToolView[] })
    .tools;
}

/** Lines of a table whose columns are as wide as their widest cell. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** `tools list|show|import-openapi`: the descriptors you can see (agents: their release closure), and importing them. */
export function toolCommands(program: Command): void {
  const tools = program
    .command('tools')
    .description('descriptors: their versions, classes, states and input schemas');
  withJson(
    tools
      .command('list')
      .description('one line per tool version: id@version, kind, class, state, digest'),
  ).action(async (opts: { json?: boolean }) => {
    const list = await listTools();
    if (opts.json) return print({ tools: list });
    if (list.length === 0) return print('no tools');
    print(
      table([
        ['TOOL', 'KIND', 'CLASS', 'STATE', 'DIGEST'],
        ...list.map((t) => [
          `${t.id}@${t.version}`,
          t.kind,
          t.class,
          t.state,
          t.digest.slice(0, 12),
        ]),
      ]).join('\n'),
    );
  });
  withJson(
    tools
      .command('show <tool>')
      .description(
        'print a tool version (ID@VERSION, or ID for every version): its descriptor, input schema, declared class, state and digest',
      ),
  ).action(async (ref: string, opts: { json?: boolean }) => {
    const wanted = splitRef(ref) ?? { id: ref, version: undefined };
    const list = await listTools();
    const same = list.filter((t) => t.id === wanted.id);
    const found = same.filter((t) => wanted.version === undefined || t.version === wanted.version);
    if (found.length === 0) {
      throw new CliError(
        ExitCode.refused,
        `no tool ${ref} among the tools you can see (GET /v1/tools); ${
          same.length > 0
            ? `versions of ${wanted.id}: ${same.map((t) => `${t.version} (${t.state})`).join(', ')}`
            : `no version of ${wanted.id} exists; list them with: gatehouse tools list`
        }`,
      );
    }
    if (opts.json) return print(wanted.version === undefined ? { tools: found } : found[0]);
    print(found.map(describe).join('\n\n'));
  });
  importOpenApiCommand(tools);
}

/** A tool version for people: a heading, one field a line, the input schema as indented JSON. */
function describe(t: ToolView): string {
  const d = t.descriptor;
  const rules = (d.sideEffect.rules ?? []).map(
    (r) =>
      `${r.pointer || '/'} ${r.equals !== undefined ? `equals ${JSON.stringify(r.equals)}` : r.in ? `in ${JSON.stringify(r.in)}` : `matches ${JSON.stringify(r.matches)}`} → ${r.raiseTo}${r.reason ? ` (${r.reason})` : ''}`,
  );
  const fields: [string, string | undefined][] = [
    ['title', d.title],
    ['description', d.description],
    ['kind', t.kind],
    ['class', `${t.class} (declared)`],
    ...rules.map((r): [string, string] => ['raised when', r]),
    ['state', `${t.state}${t.stateReason ? ` (${t.stateReason})` : ''}`],
    ['digest', t.digest],
    ['published', t.publishedAt],
    ['execution', JSON.stringify(d.execution)],
    ['sandbox', d.sandbox === undefined ? undefined : JSON.stringify(d.sandbox)],
    [
      'credentials',
      d.credentials
        ?.map((c) => `${c.ref} (scope ${c.scope}) as ${JSON.stringify(c.inject)}`)
        .join('; '),
    ],
    ['timeout', d.timeoutMs === undefined ? undefined : `${d.timeoutMs} ms`],
  ];
  const lines = [`${t.id}@${t.version}`];
  for (const [name, value] of fields) if (value) lines.push(`  ${name.padEnd(12)} ${value}`);
  lines.push('  input schema');
  lines.push(
    ...JSON.stringify(d.inputSchema, null, 2)
      .split('\n')
      .map((l) => `    ${l}`),
  );
  return lines.join('\n');
}
