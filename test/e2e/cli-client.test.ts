import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { CLI, ROOT, ensureBuilt, runCli } from '../helpers/cli.js';
import type { CliRun } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway;

beforeAll(async () => {
  ensureBuilt();
  g = await startDemoGateway({ listen: true });
});
afterAll(async () => {
  await g?.close();
});

/** Runs the built CLI against the demo gateway as `who` (a demo role). */
function cli(who: keyof DemoGateway['tokens'], ...args: string[]): Promise<CliRun> {
  return runCli(args, { GATEHOUSE_URL: g.url!, GATEHOUSE_TOKEN: g.tokens[who] });
}

/** Polls `ready` every 20 ms, for up to 15 s. */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 750 && !ready(); i++) await sleep(20);
  if (!ready()) throw new Error(`timed out waiting for ${what}`);
}

/** The ids of the server-sent events in a stream's bytes. */
function eventIds(text: string): number[] {
  return [...text.matchAll(/^data: (\{.*\})$/gm)].map(
    (m) => (JSON.parse(m[1]!) as { id: number }).id,
  );
}

/** One connection through {@link startCuttableProxy}. */
interface ProxiedConnection {
  /** What the client sent first (its request head). */
  head: string;
  /** Everything the gateway sent back. */
  down: string;
  /** Ends the connection, both ways, once what came from the gateway is delivered. */
  cut(): void;
}

/** A loopback TCP proxy to `port` whose connections a test can cut. */
async function startCuttableProxy(
  port: number,
): Promise<{ url: string; connections: ProxiedConnection[]; close(): Promise<void> }> {
  const connections: ProxiedConnection[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    const c: ProxiedConnection = {
      head: '',
      down: '',
      // What the gateway sent reaches the client first: then its end, mid-response.
      cut: () => {
        upstream.destroy();
        client.end();
      },
    };
    connections.push(c);
    client.on('data', (d: Buffer) => {
      if (c.head.length < 8192) c.head += d.toString('latin1');
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      c.down += d.toString('utf8');
      client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${own}`,
    connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const show = (r: CliRun) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('gatehouse --version', () => {
  it("prints the package's version, as -V too, and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r, show(r)).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

describe('a refused invocation', () => {
  it('prints the status, code and message, the pointers and the invocation id on stderr, and exits 3', async () => {
    const r = await cli('agent', 'invoke', 'demo/echo@1.0.0', '--input', '{"mesage":"typo"}');
    expect(r.code, show(r)).toBe(3);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^422 INVALID_INPUT: Input does not match the input schema/);
    expect(lines).toContain('  /message  is required but missing');
    expect(lines).toContain('  /mesage   is not an allowed property');
    const id = /^invocation (\S+) denied at validation/.exec(lines.at(-1)!)?.[1];
    expect(id, r.stderr).toBeDefined();
    expect(lines.length).toBeLessThanOrEqual(5);
    const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${id}`, {
      token: g.tokens.agent,
    });
    expect(stored.body.error?.code).toBe('INVALID_INPUT');
  });

  it('prints the whole record on stdout with --json, still exiting 3 with the line on stderr', async () => {
    const r = await cli(
      'agent',
      'invoke',
      'demo/propose-change@1.0.0',
      '--input',
      '{"title":"t","diff":"d","target":"main"}',
      '--json',
    );
    expect(r.code, show(r)).toBe(3);
    const record = JSON.parse(r.stdout) as InvocationRecord;
    expect(record).toMatchObject({ status: 'denied', error: { code: 'POLICY_DENIED' } });
    expect(r.stderr.split('\n')[0]).toMatch(/^403 POLICY_DENIED: /);
    expect(r.stderr).toContain(`invocation ${record.id} denied at policy`);
  });

  it('names the versions of the tool that exist when the version is unknown, or says none does', async () => {
    const r = await cli('agent', 'invoke', 'demo/echo@9.9.9', '--input', '{}', '--json');
    expect(r.code, show(r)).toBe(3);
    const record = JSON.parse(r.stdout) as InvocationRecord;
    expect(record.error).toMatchObject({
      code: 'UNKNOWN_TOOL',
      details: { tool: 'demo/echo', versions: ['1.0.0'] },
    });
    expect(r.stderr).toMatch(/^422 UNKNOWN_TOOL: .*versions of demo\/echo: 1\.0\.0 \(active\)/);

    const none = await cli('agent', 'invoke', 'demo/nope@1.0.0', '--input', '{}');
    expect(none.code, show(none)).toBe(3);
    expect(none.stderr).toContain('no version of demo/nope is published');
    expect(none.stderr).toContain('  versions: (none)');
  });

  it('prints a refusal without a record as status, code and message, exiting 3', async () => {
    const r = await runCli(['tools', 'list'], { GATEHOUSE_URL: g.url!, GATEHOUSE_TOKEN: 'wrong' });
    expect(r.code, show(r)).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^401 UNAUTHENTICATED: The bearer token is not valid\.\n/);
  });
});

describe('exit statuses', () => {
  it('0 for an observed call, with its status line and output on stdout', async () => {
    const r = await cli('agent', 'invoke', 'demo/echo@1.0.0', '--input', '{"message":"hello"}');
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^200 observed: demo\/echo@1\.0\.0 in dev, invocation \S+\n/);
    expect(r.stdout).toContain('"message": "hello"');
    expect(r.stderr).toBe('');
  });

  it('5 for a call awaiting approval, naming the approval and how to resume', async () => {
    const r = await cli(
      'agent',
      'invoke',
      'demo/propose-change@1.0.0',
      '--input',
      '{"title":"t","diff":"d"}',
      '--idempotency-key',
      'cli-exit-5',
    );
    expect(r.code, show(r)).toBe(5);
    const approval = /approval (\S+), invocation (\S+)/.exec(r.stdout);
    expect(approval, r.stdout).not.toBeNull();
    const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${approval![2]}`, {
      token: g.tokens.agent,
    });
    expect(stored.body).toMatchObject({ status: 'awaiting_approval', approvalId: approval![1] });
    expect(r.stdout).toContain(`--idempotency-key cli-exit-5 --approval ${approval![1]}`);
  });

  it('0 for a gated call with --wait once a reviewer approves it, the progress on stderr', async () => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'invoke',
        'demo/propose-change@1.0.0',
        '--input',
        '{"title":"waited","diff":"d"}',
        '--wait',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, GATEHOUSE_URL: g.url!, GATEHOUSE_TOKEN: g.tokens.agent },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // Approved only once the CLI is waiting, as a reviewer would.
    const timer = setTimeout(() => child.kill(), 20_000);
    const approval = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /a reviewer can run: gatehouse approvals approve (\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      void exited.then(() => reject(new Error(`exited before waiting:\n${stdout}${stderr}`)));
    });
    const approved = await g.inject('POST', `/v1/approvals/${approval}/approve`, {
      token: g.tokens.reviewer,
      body: { reason: 'fine' },
    });
    expect(approved.status).toBe(200);
    const code = await exited;
    clearTimeout(timer);
    expect(code, `${stdout}${stderr}`).toBe(0);
    expect(stderr).toContain(`… approval ${approval}: pending, 0 of 1 approvals`);
    expect(stderr).toContain(`… approval ${approval}: approved, 1 of 1 approvals`);
    expect(stdout).toMatch(/^200 observed: demo\/propose-change@1\.0\.0 in dev/);
    expect(stdout).toContain('"title": "waited"');
  });

  it('--wait resumes an event stream that ends, with Last-Event-ID, and still sees the approval', async () => {
    const proxy = await startCuttableProxy(Number(new URL(g.url!).port));
    const child = spawn(
      process.execPath,
      [
        CLI,
        'invoke',
        'demo/propose-change@1.0.0',
        '--input',
        '{"title":"resumed","diff":"d"}',
        '--wait',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, GATEHOUSE_URL: proxy.url, GATEHOUSE_TOKEN: g.tokens.agent },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const timer = setTimeout(() => child.kill(), 30_000);
    try {
      const streams = () =>
        proxy.connections.filter((c) => c.head.startsWith('GET /v1/events/stream'));
      await until(() => /approvals approve \S+/.test(stderr) && streams().length === 1, 'the wait');
      const approval = /approvals approve (\S+)/.exec(stderr)![1]!;
      // An event of this agent reaches the CLI, so it has an event to resume after.
      const echo = await g.invoke(g.tokens.agent, 'cli-wait-resume-echo', {
        tool: { id: 'demo/echo', version: '1.0.0' },
        input: { message: 'between' },
        environment: 'dev',
      });
      expect(echo.status).toBe(200);
      await until(() => eventIds(streams()[0]!.down).length > 0, 'an event on the stream');
      const seen = Math.max(...eventIds(streams()[0]!.down));

      // The stream ends under the CLI (a proxy, a restart, a reader the gateway found slow).
      streams()[0]!.cut();
      await until(() => streams().length === 2, 'a second stream');
      expect(streams()[1]!.head).toMatch(new RegExp(`\r\nlast-event-id: ${seen}\r\n`, 'i'));

      const approved = await g.inject('POST', `/v1/approvals/${approval}/approve`, {
        token: g.tokens.reviewer,
        body: { reason: 'fine' },
      });
      expect(approved.status).toBe(200);
      const code = await exited;
      expect(code, `${stdout}${stderr}`).toBe(0);
      expect(stderr).toContain(`the event stream ended; reconnecting after event ${seen} (1 of 5)`);
      expect(stderr).toContain(`… approval ${approval}: approved, 1 of 1 approvals`);
      expect(stdout).toMatch(/^200 observed: demo\/propose-change@1\.0\.0 in dev/);
    } finally {
      clearTimeout(timer);
      child.kill();
      await proxy.close();
    }
  });

  it('1 for a call whose effect is uncertain, on stderr', async () => {
    const r = await cli('agent', 'invoke', 'demo/sh@1.0.0', '--input', '{"script":"exit 3"}');
    expect(r.code, show(r)).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^200 EXIT_CODE: .*\ninvocation \S+ uncertain at execute/);
  });

  it('2 for a wrong command line, before anything is sent', async () => {
    const agent = principalOf('agent');
    const mine = async () =>
      (await g.gateway.invocations.list(agent.tenant, agent.id, { limit: 500 })).length;
    const before = await mine();
    for (const args of [
      ['invoke', 'demo/echo@1.0.0', '--input', '{"message":'],
      ['invoke', 'demo/echo', '--input', '{}'],
      ['invoke', 'demo/echo@1.0.0', '--input', '{}', '--bogus'],
      ['invoke', 'demo/echo@1.0.0'],
      ['events', 'publish', '/nonexistent/events.json'],
      ['nope'],
      ['tools'],
      ['serve', '--port', 'abc'],
    ]) {
      const r = await cli('agent', ...args);
      expect(r.code, `${args.join(' ')}\n${show(r)}`).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr.length, args.join(' ')).toBeGreaterThan(0);
    }
    expect(await mine()).toBe(before);
    const config = await runCli(['serve', '--data', g.dataDir], { GATEHOUSE_POOL: 'bogus' });
    expect(config.code, show(config)).toBe(2);
    expect(config.stderr).toBe(
      'error: GATEHOUSE_POOL must look like key=value,key=value; got "bogus".\n',
    );
  });

  it('4 when the gateway cannot be reached', async () => {
    const port = await closedPort();
    const r = await runCli(['approvals', 'list'], { GATEHOUSE_URL: `http://127.0.0.1:${port}` });
    expect(r.code, show(r)).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`cannot reach Gatehouse at http://127.0.0.1:${port}`);
  });
});

describe('gatehouse tools', () => {
  it('list prints one line per tool version with kind, class, state and digest', async () => {
    const r = await cli('admin', 'tools', 'list');
    expect(r.code, show(r)).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TOOL\s+KIND\s+CLASS\s+STATE\s+DIGEST$/);
    const all = g.gateway.registry.list('acme');
    expect(lines).toHaveLength(all.length + 1);
    const echo = all.find((d) => d.descriptor.id === 'demo/echo')!;
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^demo/echo@1\\.0\\.0\\s+native\\s+read\\s+active\\s+${echo.digest.slice(0, 12)}$`,
        ),
      ),
    );
  });

  it('show prints the descriptor, input schema, declared class, state and digest', async () => {
    const r = await cli('agent', 'tools', 'show', 'demo/git-log@1.0.0');
    expect(r.code, show(r)).toBe(0);
    const stored = g.gateway.registry.tool('acme', 'demo/git-log', '1.0.0')!.stored;
    expect(r.stdout).toMatch(/^demo\/git-log@1\.0\.0\n/);
    expect(r.stdout).toMatch(/\n {2}class {8}read \(declared\)\n/);
    expect(r.stdout).toMatch(/\n {2}state {8}active\n/);
    expect(r.stdout).toContain(`  digest       ${stored.digest}\n`);
    const schema = r.stdout.slice(r.stdout.indexOf('  input schema\n') + 15);
    expect(JSON.parse(schema)).toEqual(stored.descriptor.inputSchema);

    const json = await cli('agent', 'tools', 'show', 'demo/git-log@1.0.0', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ digest: stored.digest, state: 'active' });
  });

  it('show of an unknown version names the versions there are, exiting 3', async () => {
    const r = await cli('agent', 'tools', 'show', 'demo/echo@2.0.0');
    expect(r.code, show(r)).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('versions of demo/echo: 1.0.0 (active)');
  });
});

describe('the README sandbox call', () => {
  it('redacts echo $DEMO_TOKEN | base64 to the marker alone, leaving no character of it', async () => {
    const r = await cli(
      'agent',
      'invoke',
      'demo/sh@1.0.0',
      '--input',
      '{"script":"echo $DEMO_TOKEN; echo $DEMO_TOKEN | base64"}',
      '--json',
    );
    expect(r.code, show(r)).toBe(0);
    const record = JSON.parse(r.stdout) as InvocationRecord;
    expect((record.output as { stdout: string }).stdout).toBe(
      '[REDACTED:brokered:demo-token]\n[REDACTED:brokered:demo-token]\n',
    );
    expect(record.redactions).toEqual([
      { kind: 'brokered:demo-token', encoding: 'plain', count: 1 },
      { kind: 'brokered:demo-token', encoding: 'base64', count: 1 },
    ]);
  });
});

describe('demo/git-log, with a run and an attempt', () => {
  it('answers the commits of the demo repository; calls of one run and attempt share one lease', async () => {
    const run = ['--run-id', 'run-1', '--attempt-id', 'attempt-1', '--json'];
    const records: InvocationRecord[] = [];
    for (const count of ['2', '3']) {
      const r = await cli(
        'agent',
        'invoke',
        'demo/git-log@1.0.0',
        '--input',
        `{"count":${count}}`,
        ...run,
      );
      expect(r.code, show(r)).toBe(0);
      records.push(JSON.parse(r.stdout) as InvocationRecord);
    }
    const stdout = (records[1]!.output as { stdout: string }).stdout;
    expect(stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(records[0]!.lease?.id).toBeDefined();
    expect(records[1]!.lease?.id).toBe(records[0]!.lease?.id);
  });
});

function principalOf(who: keyof DemoGateway['tokens']) {
  return g.gateway.directory.authenticate(g.tokens[who])!;
}
