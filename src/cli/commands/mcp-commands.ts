import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import { GatehouseClient } from '../client.js';
import { usageError } from '../cli-error.js';
import { print, splitRef, withJson } from '../output.js';

interface ServerView {
  id: string;
  name: string;
  state: string;
  stateReason: string | null;
  transport: { type: string; command?: string; args?: string[]; url?: string };
}

/**
 * A word of a stdio command line that names an existing file by a relative path (`./x`, `a/b.js`),
 * made absolute from here: the server runs in a sandbox whose working directory is its own
 * workspace, where a relative path would name nothing. Other words are kept as typed.
 */
function absolute(word: string): string {
  if (isAbsolute(word) || !word.includes('/') || !existsSync(word)) return word;
  return resolve(word);
}

const path = (id: string, rest = '') => `/v1/mcp-servers/${encodeURIComponent(id)}${rest}`;

/** `mcp add|list|show|verify|activate|retire|bind|reapprove`. */
export function mcpCommands(program: Command): void {
  const client = () => new GatehouseClient();
  const mcp = program.command('mcp').description('upstream MCP servers and their tools');
  mcp
    .command('add <name> [args...]')
    .description('register a server: --stdio CMD [ARGS...] or --url URL')
    .option(
      '--stdio <command>',
      'command that runs the server over stdio (the rest are its arguments)',
    )
    .option('--url <url>', 'Streamable HTTP endpoint of the server')
    .option(
      '--writable <dir>',
      'a directory the sandboxed stdio server may write (repeatable; made absolute)',
      (dir: string, dirs: string[]) => [...dirs, resolve(dir)],
      [] as string[],
    )
    .allowUnknownOption()
    .action(
      async (
        name: string,
        args: string[],
        opts: { stdio?: string; url?: string; writable: string[] },
      ) => {
        if ((opts.stdio === undefined) === (opts.url === undefined))
          throw usageError('give exactly one of --stdio CMD [ARGS...] or --url URL');
        if (opts.url !== undefined && opts.writable.length > 0)
          throw usageError(
            '--writable is for a stdio server (--stdio); an HTTP server writes where it runs',
          );
        const writable = opts.writable.length > 0 ? { writableDirs: opts.writable } : {};
        const transport = opts.stdio
          ? { type: 'stdio', command: absolute(opts.stdio), args: args.map(absolute), ...writable }
          : { type: 'http', url: opts.url };
        const s = (await client().request('POST', '/v1/mcp-servers', { name, transport }))
          .body as ServerView;
        print(`registered ${s.id} (${s.state}); next: gatehouse mcp verify ${s.id}`);
      },
    );
  withJson(mcp.command('list').description("list your tenant's servers")).action(
    async (opts: { json?: boolean }) => {
      const { body } = await client().request('GET', '/v1/mcp-servers');
      if (opts.json) return print(body);
      const { servers } = body as { servers: ServerView[] };
      if (servers.length === 0) print('no MCP servers');
      for (const s of servers) {
        const where =
          s.transport.type === 'stdio'
            ? `${s.transport.command ?? ''} ${(s.transport.args ?? []).join(' ')}`
            : (s.transport.url ?? '');
        print(
          `${s.id}  ${s.state.padEnd(10)} ${s.name.padEnd(20)} ${where}${s.stateReason ? `  (${s.stateReason})` : ''}`,
        );
      }
    },
  );
  mcp
    .command('show <id>')
    .description('print a server with its discovered tools and bindings')
    .action(async (id: string) => print((await client().request('GET', path(id))).body));
  for (const action of ['verify', 'activate', 'retire'] as const) {
    mcp
      .command(`${action} <id>`)
      .description(
        {
          verify: 'handshake and discover its tools, resources and prompts',
          activate: 'make a verified server active',
          retire: 'retire a server (final; its process is stopped)',
        }[action],
      )
      .action(async (id: string) => {
        const body = (await client().request('POST', path(id, `/${action}`), {})).body as
          ServerView | { server: ServerView };
        const s = 'server' in body ? body.server : body;
        print(`server ${s.id} is ${s.state}`);
      });
  }
  mcp
    .command('bind <id> <tool>')
    .description('bind a discovered tool to a descriptor and publish it')
    .requiredOption('--class <class>', 'read, workspace-write, shared-write or production')
    .requiredOption('--as <id@version>', 'the descriptor id and version to publish')
    .action(async (id: string, tool: string, opts: { class: string; as: string }) => {
      const descriptor = splitRef(opts.as);
      if (!descriptor) throw usageError('--as must be ID@VERSION, e.g. everything/echo@1.0.0');
      const r = (
        await client().request('POST', path(id, '/bindings'), {
          tool,
          class: opts.class,
          descriptor,
        })
      ).body as { warnings: string[] };
      print(`bound ${tool} as ${opts.as} (${opts.class})`);
      for (const w of r.warnings) print(`warning: ${w}`);
      print(
        `agents call it once their release holds it: gatehouse releases publish AGENT@NEW --from AGENT@CURRENT --add ${opts.as}`,
      );
    });
  mcp
    .command('reapprove <id> <tool>')
    .description('accept a changed tool as the server lists it now')
    .option(
      '--version <version>',
      'a new descriptor version (required when the input schema changed)',
    )
    .action(async (id: string, tool: string, opts: { version?: string }) => {
      const r = (
        await client().request(
          'POST',
          path(id, `/bindings/${encodeURIComponent(tool)}/reapprove`),
          opts.version ? { version: opts.version } : {},
        )
      ).body as {
        binding: { descriptor: { id: string; version: string } };
        inputSchemaChanged: boolean;
      };
      print(
        `re-approved ${tool}: bound to ${r.binding.descriptor.id}@${r.binding.descriptor.version}${r.inputSchemaChanged ? ' (input schema changed; new version published)' : ''}`,
      );
    });
}
