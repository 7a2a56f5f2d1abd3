import type { Command } from 'commander';
import { CliError, usageError } from '../cli-error.js';
import { GatehouseClient } from '../client.js';
import { ExitCode } from '../exit-codes.js';
import { print, splitRef, withJson } from '../output.js';

/** An agent release as `GET /v1/agent-releases` lists it. */
interface ReleaseView {
  agentId: string;
  version: string;
  closure: { id: string; version: string }[];
  policy: { maxClass: string };
  mcp?: { toolNames: string };
  digest: string;
  publishedAt: string;
}

interface PublishOptions {
  from?: string;
  add: string[];
  remove: string[];
  maxClass?: string;
  mcpNames?: string;
  dryRun?: boolean;
  json?: boolean;
}

const CLASSES = ['read', 'workspace-write', 'shared-write', 'production'];
const NAMINGS = ['versioned', 'upstream'];

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function releasesOf(agent?: string): Promise<ReleaseView[]> {
  const q = agent === undefined ? '' : `?agent=${encodeURIComponent(agent)}`;
  const { body } = await new GatehouseClient().request('GET', `/v1/agent-releases${q}`);
  return (body as { releases: ReleaseView[] }).releases;
}

/** The release `ref` names. @throws CliError (refused) naming the versions that exist. */
async function findRelease(ref: string): Promise<ReleaseView> {
  const wanted = splitRef(ref);
  if (!wanted)
    throw usageError(
      `name the release as AGENT@VERSION, e.g. demo-agent@1.0.0; got ${JSON.stringify(ref)}`,
    );
  const all = await releasesOf(wanted.id);
  const found = all.find((r) => r.version === wanted.version);
  if (found) return found;
  throw new CliError(
    ExitCode.refused,
    `agent release ${ref} is not published (${all.length > 0 ? `versions of ${wanted.id}: ${all.map((r) => r.version).join(', ')}` : `no version of ${wanted.id} is published`})`,
  );
}

/** `releases list|show|publish`: agent releases, whose closures say which tools an agent may call. */
export function releaseCommands(program: Command): void {
  const releases = program
    .command('releases')
    .description('agent releases: the exact tool versions an agent may call (its closure)');
  withJson(
    releases
      .command('list')
      .description('one line per agent release: agent@version, maxClass, tools, published')
      .option('--agent <id>', 'only the versions of this agent'),
  ).action(async (opts: { agent?: string; json?: boolean }) => {
    const list = await releasesOf(opts.agent);
    if (opts.json) return print({ releases: list });
    if (list.length === 0) return print('no agent releases');
    for (const r of list)
      print(
        `${`${r.agentId}@${r.version}`.padEnd(24)} maxClass ${r.policy.maxClass.padEnd(15)} ${String(r.closure.length).padStart(3)} tools  published ${r.publishedAt}`,
      );
  });
  withJson(
    releases
      .command('show <release>')
      .description('print an agent release (AGENT@VERSION) and its closure'),
  ).action(async (ref: string, opts: { json?: boolean }) => {
    const r = await findRelease(ref);
    if (opts.json) return print(r);
    print(
      [
        `${r.agentId}@${r.version}  maxClass ${r.policy.maxClass}  /mcp names ${r.mcp?.toolNames ?? 'versioned'}  published ${r.publishedAt}`,
        ...r.closure.map((t) => `  ${t.id}@${t.version}`),
      ].join('\n'),
    );
  });
  withJson(
    releases
      .command('publish <release>')
      .description(
        'publish a new agent release AGENT@VERSION (an AgentReleasePublished event): a copy of --from with tools added and removed',
      )
      .option(
        '--from <release>',
        'start from the closure and maxClass of this release (AGENT@VERSION)',
      )
      .option(
        '--add <tool>',
        'add ID@VERSION to the closure; it replaces another version of ID (repeat for more)',
        collect,
        [],
      )
      .option(
        '--remove <tool>',
        'remove ID@VERSION, or every version of ID (repeat for more)',
        collect,
        [],
      )
      .option('--max-class <class>', `the highest class the agent may call: ${CLASSES.join(', ')}`)
      .option(
        '--mcp-names <naming>',
        "how /mcp names its tools: versioned (id__version, the default) or upstream (an MCP tool keeps its server's name where unique); copied with --from",
      )
      .option('--dry-run', 'print the event instead of publishing it'),
  ).action(async (ref: string, opts: PublishOptions) => {
    const target = splitRef(ref);
    if (!target)
      throw usageError(
        `name the new release as AGENT@VERSION, e.g. demo-agent@1.1.0; got ${JSON.stringify(ref)}`,
      );
    if (opts.maxClass !== undefined && !CLASSES.includes(opts.maxClass))
      throw usageError(
        `--max-class must be one of ${CLASSES.join(', ')}; got ${JSON.stringify(opts.maxClass)}`,
      );
    if (opts.mcpNames !== undefined && !NAMINGS.includes(opts.mcpNames))
      throw usageError(
        `--mcp-names must be one of ${NAMINGS.join(', ')}; got ${JSON.stringify(opts.mcpNames)}`,
      );
    const base = opts.from === undefined ? undefined : await findRelease(opts.from);
    const toolNames = opts.mcpNames ?? base?.mcp?.toolNames;
    const maxClass = opts.maxClass ?? base?.policy.maxClass;
    if (maxClass === undefined)
      throw usageError('give --max-class, or --from a release to copy it from');
    let closure = [...(base?.closure ?? [])];
    const notes: string[] = [];
    for (const r of opts.remove) {
      const t = splitRef(r);
      const before = closure.length;
      closure = closure.filter((c) => (t ? c.id !== t.id || c.version !== t.version : c.id !== r));
      if (closure.length === before) throw usageError(`--remove ${r}: the closure holds no ${r}`);
    }
    for (const a of opts.add) {
      const t = splitRef(a);
      if (!t)
        throw usageError(
          `--add takes ID@VERSION, e.g. mine/tiny-image@1.0.0; got ${JSON.stringify(a)}`,
        );
      for (const old of closure.filter((c) => c.id === t.id && c.version !== t.version))
        notes.push(`${t.id}@${t.version} replaces ${old.id}@${old.version}`);
      closure = [...closure.filter((c) => c.id !== t.id), t];
    }
    if (closure.length === 0)
      throw usageError('the release would hold no tools: --add one, or start --from a release');
    const data = {
      agentId: target.id,
      version: target.version,
      closure,
      policy: { maxClass },
      ...(toolNames !== undefined && toolNames !== 'versioned' ? { mcp: { toolNames } } : {}),
    };
    // Named by its content: the same command run twice is one event (a duplicate, not a conflict).
    const { createHash } = await import('node:crypto');
    const digest = createHash('sha256').update(JSON.stringify(data)).digest('hex').slice(0, 16);
    const event = { id: `cli:agent/${ref}:${digest}`, type: 'AgentReleasePublished', data };
    if (opts.dryRun) return print(event);
    const { body } = await new GatehouseClient().request('POST', '/v1/events', event);
    if (opts.json) return print(body);
    const result = (body as { results: { result: string; message: string }[] }).results[0];
    print(
      [
        `${ref}: ${result?.result ?? 'sent'}, ${closure.length} tools, maxClass ${maxClass}`,
        ...notes,
        `agents call its tools with a principal of this release: gatehouse principals add NAME --role agent --project PROJECT --agent ${ref}`,
      ].join('\n'),
    );
  });
}
