import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
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
