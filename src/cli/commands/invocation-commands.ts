import type { Command } from 'commander';
import { usageError } from '../cli-error.js';
import { ApiError, GatehouseClient } from '../client.js';
import { print, warn, withJson } from '../output.js';

/** The most calls one page of `GET /v1/invocations` holds. */
const PAGE_MAX = 500;

/** Each filter flag of `invocations list` and the query parameter of `GET /v1/invocations` it sets. */
const FILTERS = {
  status: 'status',
  tool: 'tool',
  toolVersion: 'toolVersion',
  agent: 'agent',
  environment: 'environment',
  from: 'from',
  to: 'to',
} as const;

/** The flag a person typed for a query parameter, for error messages. */
const FLAG_OF: Record<string, string> = {
  status: '--status',
  tool: '--tool',
  toolVersion: '--tool-version',
  agent: '--agent',
  environment: '--environment',
  from: '--from',
  to: '--to',
  limit: '--limit',
  cursor: '--cursor',
};

interface ListOptions extends Partial<Record<keyof typeof FILTERS, string>> {
  limit?: string;
  cursor?: string;
  all?: boolean;
  json?: boolean;
}

interface InvocationLine {
  id: string;
  status: string;
  tool: { id: string; version: string };
  environment: string;
  createdAt: string;
  error?: { code: string };
}

interface InvocationPage {
  invocations: InvocationLine[];
  nextCursor: string | null;
}

/** `invocations get ID` and `invocations list` with the filters and cursor of the REST API. */
export function invocationCommands(program: Command): void {
  const client = () => new GatehouseClient();
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
      .description(
        "list the tenant's invocations, newest first, one page (--limit) at a time; the next page: --cursor, every page: --all",
      )
      .option('--status <status>', 'only this status (e.g. observed, uncertain, awaiting_approval)')
      .option('--tool <id>', 'only calls of this tool id (every version)')
      .option('--tool-version <version>', 'with --tool: only this version of it')
      .option('--agent <id>', 'only calls made by this agent id')
      .option('--environment <env>', 'only calls in this environment')
      .option('--from <instant>', 'only calls created at or after this ISO 8601 instant or date')
      .option('--to <instant>', 'only calls created before this ISO 8601 instant or date')
      .option('--limit <n>', `at most this many on a page (default 50, max ${PAGE_MAX})`)
      .option('--cursor <cursor>', 'the page after this cursor (printed after a page with more)')
      .option('--all', 'follow the cursor to the last page and print every call'),
  ).action(async (opts: ListOptions) => {
    const query = listQuery(opts);
    const pages: InvocationPage[] = [];
    let cursor = opts.cursor;
    for (;;) {
      const page = await fetchPage(client(), query, cursor);
      pages.push(page);
      if (!opts.all || page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    const list = pages.flatMap((p) => p.invocations);
    const nextCursor = pages[pages.length - 1]!.nextCursor;
    if (opts.json) return print({ invocations: list, nextCursor });
    if (list.length === 0) print('no invocations');
    for (const i of list)
      print(
        `${i.id}  ${i.status.padEnd(17)} ${`${i.tool.id}@${i.tool.version}`.padEnd(32)} ${i.environment.padEnd(8)} ${i.createdAt}${i.error ? `  ${i.error.code}` : ''}`,
      );
    if (nextCursor !== null)
      warn(`more: the next page is --cursor ${nextCursor} (or --all for every page)`);
  });
}

/**
 * The query parameters of the flags, checked where the CLI can tell on its own (the gateway
 * checks the rest; its refusal is reported under the flag's name).
 * @throws CliError (usage) naming the flag, what it must be and what it was.
 */
function listQuery(opts: ListOptions): URLSearchParams {
  const q = new URLSearchParams();
  for (const [option, parameter] of Object.entries(FILTERS)) {
    const v = opts[option as keyof typeof FILTERS];
    if (v === undefined) continue;
    if (v === '') throw usageError(`${FLAG_OF[parameter]} is empty; give a value or leave it out`);
    q.set(parameter, v);
  }
  if (opts.toolVersion !== undefined && opts.tool === undefined)
    throw usageError('--tool-version needs --tool: a version is of one tool; give --tool ID too');
  if (opts.limit !== undefined) {
    const n = /^\d+$/.test(opts.limit) ? Number(opts.limit) : NaN;
    if (!(n >= 1 && n <= PAGE_MAX))
      throw usageError(
        `--limit must be a whole number from 1 to ${PAGE_MAX}; got ${JSON.stringify(opts.limit)}`,
      );
    q.set('limit', String(n));
  } else if (opts.all) {
    q.set('limit', String(PAGE_MAX));
  }
  if (opts.cursor === '') throw usageError('--cursor is empty; give the cursor a page printed');
  return q;
}

/**
 * One page, after `cursor` when given.
 * @throws CliError (usage) when the gateway refused a flag's value, under the flag's name.
 */
async function fetchPage(
  client: GatehouseClient,
  query: URLSearchParams,
  cursor: string | undefined,
): Promise<InvocationPage> {
  const q = new URLSearchParams(query);
  if (cursor !== undefined) q.set('cursor', cursor);
  const text = q.toString();
  try {
    const { body } = await client.request('GET', `/v1/invocations${text ? `?${text}` : ''}`);
    return body as InvocationPage;
  } catch (err) {
    const parameter = err instanceof ApiError ? err.details.parameter : undefined;
    if (err instanceof ApiError && err.status === 400 && typeof parameter === 'string') {
      const flag = FLAG_OF[parameter];
      if (flag) throw usageError(err.message.replace(`Query parameter ${parameter}`, flag), err);
    }
    throw err;
  }
}
