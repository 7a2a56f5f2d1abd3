import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import type { CliRun } from '../helpers/cli.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway;
/** The ids of the calls made, newest first, as the gateway lists them. */
const made: { echoDev: string[]; echoProd: string[]; gated: string[] } = {
  echoDev: [],
  echoProd: [],
  gated: [],
};

beforeAll(async () => {
  ensureBuilt();
  g = await startDemoGateway({ listen: true });
  const make = async (key: string, body: unknown, into: string[]) => {
    const r = await g.invoke(g.tokens.agent, key, body);
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    into.unshift(r.body.id);
  };
  for (let i = 0; i < 3; i++)
    await make(`dev-${i}`, call('demo/echo', { message: `m${i}` }), made.echoDev);
  await make('prod-0', call('demo/echo', { message: 'p' }, 'prod'), made.echoProd);
  await make('gated-0', call('demo/propose-change', { title: 'Fix', diff: '-a\n+b' }), made.gated);
});
afterAll(async () => {
  await g?.close();
});

/** `gatehouse invocations list ARGS` against the demo gateway as its operator. */
function list(...args: string[]): Promise<CliRun> {
  return runCli(['invocations', 'list', ...args], {
    GATEHOUSE_URL: g.url!,
    GATEHOUSE_TOKEN: g.tokens.operator,
  });
}

/** The invocation ids of the lines `invocations list` printed. */
function ids(r: CliRun): string[] {
  return r.stdout
    .trimEnd()
    .split('\n')
    .filter((l) => l !== 'no invocations')
    .map((l) => l.split(' ')[0]!);
}

const show = (r: CliRun) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe('gatehouse invocations list: filters', () => {
  it('narrows by status, tool and version, agent, environment and time', async () => {
    const all = [made.gated[0]!, made.echoProd[0]!, ...made.echoDev];
    const agent = g.gateway.directory.authenticate(g.tokens.agent)!.agent!.id;
    const cases: [string[], string[]][] = [
      [[], all],
      [['--status', 'awaiting_approval'], made.gated],
      [
        ['--tool', 'demo/echo'],
        [made.echoProd[0]!, ...made.echoDev],
      ],
      [['--tool', 'demo/echo', '--tool-version', '1.0.0', '--environment', 'dev'], made.echoDev],
      [['--tool', 'demo/echo', '--tool-version', '9.9.9'], []],
      [['--environment', 'prod'], made.echoProd],
      [['--agent', agent], all],
      [['--agent', 'someone-else'], []],
      [['--from', '2000-01-01', '--to', '2999-01-01T00:00:00Z'], all],
      [['--from', '2999-01-01'], []],
    ];
    for (const [args, expected] of cases) {
      const r = await list(...args);
      expect(r.code, `${args.join(' ')}\n${show(r)}`).toBe(0);
      expect(ids(r), args.join(' ')).toEqual(expected);
      if (expected.length === 0) expect(r.stdout).toBe('no invocations\n');
      expect(r.stderr, args.join(' ')).toBe('');
    }
  });

  it('prints the whole answer with --json, the filters applied', async () => {
    const r = await list('--status', 'observed', '--environment', 'dev', '--json');
    expect(r.code, show(r)).toBe(0);
    const body = JSON.parse(r.stdout) as {
      invocations: { id: string; status: string }[];
      nextCursor: string | null;
    };
    expect(body.invocations.map((i) => i.id)).toEqual(made.echoDev);
    expect(body.invocations.every((i) => i.status === 'observed')).toBe(true);
    expect(body.nextCursor).toBeNull();
  });
});

describe('gatehouse invocations list: pages', () => {
  it('prints one page and the cursor of the next; --cursor takes it; --all follows to the end', async () => {
    const all = [made.gated[0]!, made.echoProd[0]!, ...made.echoDev];
    const first = await list('--limit', '2');
    expect(first.code, show(first)).toBe(0);
    expect(ids(first)).toEqual(all.slice(0, 2));
    const cursor = /^more: the next page is --cursor (\S+) /.exec(first.stderr)?.[1];
    expect(cursor, first.stderr).toBe(all[1]);

    const second = await list('--limit', '2', '--cursor', cursor!);
    expect(ids(second)).toEqual(all.slice(2, 4));
    expect(second.stderr).toMatch(/^more: /);
    const last = await list('--limit', '2', '--cursor', all[3]!);
    expect(ids(last)).toEqual(all.slice(4));
    expect(last.stderr).toBe('');

    const every = await list('--all', '--limit', '2');
    expect(every.code, show(every)).toBe(0);
    expect(ids(every)).toEqual(all);
    expect(every.stderr).toBe('');
    const json = await list('--all', '--limit', '2', '--tool', 'demo/echo', '--json');
    const body = JSON.parse(json.stdout) as { invocations: { id: string }[]; nextCursor: null };
    expect(body.invocations.map((i) => i.id)).toEqual(all.slice(1));
    expect(body.nextCursor).toBeNull();
  });
});

describe('gatehouse invocations list: bad flag values', () => {
  it('exits 2 naming the flag, what it must be and what it was, printing no list', async () => {
    const cases: [string[], RegExp][] = [
      [['--limit', '0'], /^error: --limit must be a whole number from 1 to 500; got "0"/],
      [['--limit', 'ten'], /^error: --limit must be a whole number from 1 to 500; got "ten"/],
      [['--limit', '501'], /^error: --limit must be a whole number from 1 to 500/],
      [['--tool-version', '1.0.0'], /^error: --tool-version needs --tool/],
      [['--agent', ''], /^error: --agent is empty/],
      [['--status', 'done'], /^error: --status must be one of .*observed.*; got "done"/],
      [['--from', 'yesterday'], /^error: --from must be an ISO 8601 instant .*; got "yesterday"/],
      [['--from', '2026-02-01', '--to', '2026-01-01'], /^error: --to is before from/],
      [['--cursor', 'not a cursor!'], /^error: --cursor must be the nextCursor of an earlier/],
    ];
    for (const [args, message] of cases) {
      const r = await list(...args);
      expect(r.code, `${args.join(' ')}\n${show(r)}`).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });
});
