import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngSize } from '../../src/executors/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { skipWithout } from '../helpers/prerequisites.js';
import {
  auditText,
  cgroupDirsNamed,
  leaseRows,
  publishAgent,
  verifiedReceipt,
} from '../helpers/sandbox-tools.js';
import {
  browserTool,
  missingChromium,
  sandboxedChromium,
  startTestSite,
} from './browser-fixture.js';

/** The password the broker holds; a page must receive it, no record may show it. */
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
const VIEWPORT = { width: 800, height: 600 };
/** Chromium runs many threads, and a cgroup v1 pids limit counts threads. */
const BROWSER_SANDBOX = { memoryMb: 768, pids: 1024 };

let g: DemoGateway;
let agent: string;
let site: Awaited<ReturnType<typeof startTestSite>>;
/** A second site on another loopback port: the same pages, another origin. */
let elsewhere: Awaited<ReturnType<typeof startTestSite>>;

interface BrowserOutput {
  steps: Record<string, unknown>[];
  url: string | null;
  title: string | null;
  failed?: { index: number; action: string; code: string; message: string };
}

const unavailable = skipWithout('Chromium (Debian package chromium)', missingChromium());

describe.skipIf(unavailable)('browser tools through the gateway', () => {
  beforeAll(async () => {
    site = await startTestSite();
    elsewhere = await startTestSite();
    g = await startDemoGateway({ listen: true });
    const put = await g.inject('PUT', '/v1/secrets/portal-password', {
      token: g.tokens.admin,
      body: { value: PASSWORD, scopes: ['test'] },
    });
    expect(put.status).toBe(200);
    const egress = [`127.0.0.1:${site.port}`];
    agent = await publishAgent(g, 'browser-agent', [
      browserTool(
        'test/browse',
        {
          allowedActions: ['goto', 'extract', 'screenshot', 'click', 'waitFor'],
          viewport: VIEWPORT,
        },
        { sandbox: { ...BROWSER_SANDBOX, egress } },
      ),
      browserTool(
        'test/login',
        { allowedActions: ['goto', 'fill', 'click', 'waitFor', 'extract', 'screenshot'] },
        {
          sideEffect: { class: 'workspace-write' },
          // Both sites are reachable; the password is bound to the first one's origin only.
          sandbox: { ...BROWSER_SANDBOX, egress: [...egress, `127.0.0.1:${elsewhere.port}`] },
          credentials: [
            {
              ref: 'portal-password',
              scope: 'test',
              inject: { env: 'PORTAL_PASSWORD', origin: site.origin },
            },
          ],
        },
      ),
      browserTool(
        'test/hog',
        { allowedActions: ['goto', 'waitFor'] },
        { sandbox: { memoryMb: 512, pids: 1024, egress } },
      ),
      browserTool(
        'test/slow-write',
        { allowedActions: ['goto', 'waitFor'] },
        {
          sideEffect: { class: 'workspace-write' },
          sandbox: { ...BROWSER_SANDBOX, egress },
          timeoutMs: 15_000,
        },
      ),
      browserTool(
        'test/hog-write',
        { allowedActions: ['goto', 'waitFor'] },
        {
          sideEffect: { class: 'workspace-write' },
          sandbox: { memoryMb: 512, pids: 1024, egress },
        },
      ),
    ]);
  }, 60_000);

  afterAll(async () => {
    await g?.close();
    await site?.close();
    await elsewhere?.close();
  });

  let n = 0;
  async function browse(tool: string, steps: unknown[]): Promise<InvocationRecord> {
    n += 1;
    const res = await g.invoke(agent, `browse-${n}`, call(tool, { steps }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }
  const out = (r: InvocationRecord): BrowserOutput => r.output as BrowserOutput;

  /**
   * One call reads the board, then tries its file:// link and the page that fetches an unlisted
   * port; the two tests after read their part of it (a cold Chromium is most of a call's time).
   */
  let tour: Promise<InvocationRecord> | undefined;
  async function toured(): Promise<InvocationRecord> {
    tour ??= browse('test/browse', [
      { action: 'goto', url: `${site.origin}/` },
      { action: 'extract', selector: 'h1' },
      { action: 'extract', selector: 'li.t' },
      { action: 'screenshot' },
      { action: 'click', selector: '#passwd' },
      { action: 'extract', selector: 'body' },
      { action: 'goto', url: `${site.origin}/peek` },
      { action: 'waitFor', selector: '#out:not(:has-text("waiting"))' },
      { action: 'extract', selector: '#out' },
    ]);
    const r = await tour;
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    return r;
  }

  it('browses a loopback page: extracts its heading and takes a PNG screenshot of the declared viewport', async () => {
    const r = await toured();
    const o = out(r);
    expect(o.steps[0]).toMatchObject({ action: 'goto', status: 200 });
    expect(o.steps[1]).toMatchObject({ action: 'extract', values: ['Open tickets'] });
    expect(o.steps[2]).toMatchObject({ values: ['Printer on fire', 'VPN down'] });
    const shot = o.steps[3] as {
      artifact: string;
      width: number;
      height: number;
      mediaType: string;
    };
    expect(shot).toMatchObject({ action: 'screenshot', mediaType: 'image/png', ...VIEWPORT });
    const png = readFileSync(
      join(g.dataDir, 'artifacts', shot.artifact.slice(0, 2), shot.artifact),
    );
    expect(png.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
    expect(pngSize(png)).toEqual(VIEWPORT);
    expect(r.egress.map((e) => [e.host, e.port, e.allowed])).toContainEqual([
      '127.0.0.1',
      site.port,
      true,
    ]);
    const { predicate } = await verifiedReceipt(g, r.id);
    expect(predicate.egress).toEqual(r.egress);
  }, 60_000);

  it('refuses, at validation and with a pointer to the step, a step the descriptor does not allow', async () => {
    const res = await g.invoke(
      agent,
      'browse-not-allowed',
      call('test/browse', {
        steps: [
          { action: 'goto', url: `${site.origin}/` },
          { action: 'fill', selector: '#q', value: 'x' },
        ],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.status).toBe('denied');
    const violations = res.body.error?.details?.violations as {
      pointer: string;
      message: string;
    }[];
    expect(violations).toEqual([
      {
        pointer: '/steps/1/action',
        message: expect.stringMatching(/^is fill, which this tool does not allow/) as unknown,
      },
    ]);
    const file = await g.invoke(
      agent,
      'browse-file-url',
      call('test/browse', { steps: [{ action: 'goto', url: 'file:///etc/passwd' }] }),
    );
    expect(file.status).toBe(422);
    expect(JSON.stringify(file.body.error)).toContain('/steps/0/url');
  });

  it('refuses a goto to a host the allow-list does not name, and the refusal is on the record', async () => {
    const r = await browse('test/browse', [
      { action: 'goto', url: `http://127.0.0.1:${site.otherPort}/secret` },
      { action: 'extract', selector: 'body' },
    ]);
    expect(r.status).toBe('failed');
    expect(r.error?.code).toBe('EGRESS_REFUSED');
    expect(JSON.stringify(r.output)).not.toContain('the-unlisted-secret');
    // Chromium's own calls home (sign-in, updates) meet the same refusal; only loopback matters here.
    const loopback = r.egress.filter((e) => e.host === '127.0.0.1');
    expect(loopback.length).toBeGreaterThan(0);
    for (const e of loopback) {
      expect([e.port, e.allowed]).toEqual([site.otherPort, false]);
      expect(e.reason).toMatch(/egress allow-list/);
    }
    const { predicate } = await verifiedReceipt(g, r.id);
    expect(predicate.egress).toEqual(r.egress);
  }, 60_000);

  it('gets nothing from a file:// link or from a fetch to an unlisted loopback port', async () => {
    const r = await toured();
    const text = JSON.stringify(r.output);
    expect(text).not.toMatch(/root:x:0:0/);
    expect(text).not.toContain('the-unlisted-secret');
    const o = out(r);
    // The click on the file:// link left the board where it was.
    expect(o.steps[5]).toMatchObject({ values: [expect.stringContaining('Open tickets')] });
    expect(o.steps[8]).toMatchObject({ values: ['blocked'] });
    expect(o.url).toBe(`${site.origin}/peek`);
    expect(o.title).toBe('Peek');
    const refused = r.egress.filter((e) => e.host === '127.0.0.1' && !e.allowed);
    expect(new Set(refused.map((e) => e.port))).toEqual(new Set([site.otherPort]));
  }, 60_000);

  it('types a brokered password into the login form: the site gets it; record, receipt, audit log and artifacts never show it', async () => {
    const r = await browse('test/login', [
      { action: 'goto', url: `${site.origin}/login` },
      { action: 'fill', selector: '#user', value: 'alice' },
      { action: 'fill', selector: '#password', secret: 'portal-password' },
      { action: 'screenshot' },
      { action: 'click', selector: '#go' },
      { action: 'waitFor', selector: '#hello' },
      { action: 'extract', selector: '#hello' },
    ]);
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    expect(site.logins).toContainEqual({ user: 'alice', password: PASSWORD });
    expect(out(r).steps[6]).toMatchObject({ values: ['Welcome alice'] });
    expect(out(r).steps[2]).toEqual({
      action: 'fill',
      selector: '#password',
      secret: 'portal-password',
    });
    expect(JSON.stringify(r)).not.toContain(PASSWORD);
    const { envelope } = await verifiedReceipt(g, r.id);
    expect(JSON.stringify(envelope)).not.toContain(PASSWORD);
    const payload = Buffer.from((envelope as { payload: string }).payload, 'base64').toString();
    expect(payload).not.toContain(PASSWORD);
    expect(await auditText(g)).not.toContain(PASSWORD);
    for (const file of filesUnder(join(g.dataDir, 'artifacts')))
      expect(readFileSync(file).includes(PASSWORD), file).toBe(false);
    // A secret goes only into a password field, where every screenshot shows it masked.
    const plain = await browse('test/login', [
      { action: 'goto', url: `${site.origin}/login` },
      { action: 'fill', selector: '#user', secret: 'portal-password' },
    ]);
    expect(plain.status).toBe('uncertain');
    expect(plain.error?.message).toMatch(/not a password field/);
    expect(JSON.stringify(plain)).not.toContain(PASSWORD);
  }, 90_000);

  it('types a brokered password only into pages of the origin it is bound to: another port of the same host gets nothing', async () => {
    const r = await browse('test/login', [
      { action: 'goto', url: `${elsewhere.origin}/login` },
      { action: 'fill', selector: '#user', value: 'alice' },
      { action: 'fill', selector: '#password', secret: 'portal-password' },
      { action: 'click', selector: '#go' },
    ]);
    // A page was loaded before the refusal, so a call that can change things ends uncertain.
    expect(r.status, JSON.stringify(r.error)).toBe('uncertain');
    expect(r.error?.code).toBe('SECRET_ORIGIN');
    expect(r.error?.message).toContain(
      `the secret portal-password is bound to ${site.origin}, but #password is in a page of ${elsewhere.origin}; nothing was typed`,
    );
    expect(out(r).failed).toMatchObject({ index: 2, code: 'SECRET_ORIGIN' });
    // The form was never submitted, and nothing anywhere holds the password.
    expect(elsewhere.logins).toEqual([]);
    expect(elsewhere.seen).not.toContain('POST /login');
    expect(JSON.stringify(r)).not.toContain(PASSWORD);
    // The same steps on the bound origin still type it.
    const home = await browse('test/login', [
      { action: 'goto', url: `${site.origin}/login` },
      { action: 'fill', selector: '#password', secret: 'portal-password' },
    ]);
    expect(home.status, JSON.stringify(home.error)).toBe('observed');
  }, 90_000);

  it('kills a page that allocates memory without end at the lease memory limit', async () => {
    const r = await browse('test/hog', [
      { action: 'goto', url: `${site.origin}/hog` },
      { action: 'waitFor', selector: '#never' },
    ]);
    expect(r.status).toBe('failed');
    expect(r.error?.code).toBe('LIMIT_MEMORY');
    expect(r.error?.message).toMatch(/memory limit/);
  }, 90_000);

  it('ends a call that can change things uncertain when its browser dies after a page loaded', async () => {
    const r = await browse('test/hog-write', [
      { action: 'goto', url: `${site.origin}/hog` },
      { action: 'waitFor', selector: '#never' },
    ]);
    expect(r.status).toBe('uncertain');
    expect(r.error?.message).toMatch(/memory limit/);
    expect((r.output as BrowserOutput).failed).toMatchObject({ index: 1, code: 'LIMIT_MEMORY' });
  }, 90_000);

  it('ends a call that can change things uncertain when it times out after a page loaded; its Chromium sees no host path in its mount table', async () => {
    const call = browse('test/slow-write', [
      { action: 'goto', url: `${site.origin}/` },
      { action: 'waitFor', selector: '#never' },
    ]);
    // While it waits, the mount table of its Chromium, as the host reads it.
    let mounts: string | null = null;
    void call.finally(() => (mounts ??= ''));
    while (mounts === null) {
      mounts = sandboxMountTable(' /etc/chromium/policies/managed ');
      if (mounts === null) await new Promise((ok) => setTimeout(ok, 100));
    }
    const r = await call;
    // The policy is bound from a tmpfs of the gateway's own, the socket from the egress tmpfs.
    expect(mounts).toMatch(/ \/etc\/chromium\/policies\/managed .* gatehouse-browser /);
    for (const hidden of [g.sandboxRoot, g.dataDir, process.cwd(), String(r.lease?.id)]) {
      expect(mounts).not.toContain(hidden);
    }
    expect(r.status).toBe('uncertain');
    expect(r.error?.message).toMatch(/timed out after 15000 ms/);
    expect((r.output as BrowserOutput).failed).toMatchObject({ index: 1, code: 'TIMEOUT' });
    expect((r.output as BrowserOutput).steps).toEqual([
      { action: 'goto', url: `${site.origin}/`, status: 200 },
    ]);
  }, 60_000);

  it('answers an MCP client with the screenshot as an image content block', async () => {
    const { client } = await connectMcp(`${g.url!}/mcp`, agent);
    try {
      const result = await client.callTool({
        name: 'test_browse__1_0_0',
        arguments: {
          steps: [{ action: 'goto', url: `${site.origin}/` }, { action: 'screenshot' }],
        },
        _meta: { 'gatehouse/idempotencyKey': 'browse-mcp-1' },
      });
      expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
      const content = result.content as { type: string; data?: string; mimeType?: string }[];
      expect(content.map((c) => c.type)).toEqual(['text', 'image']);
      expect(content[1]!.mimeType).toBe('image/png');
      const png = Buffer.from(content[1]!.data!, 'base64');
      expect(pngSize(png)).toEqual(VIEWPORT);
      const shot = (result.structuredContent as BrowserOutput).steps[1] as {
        artifact: string;
      };
      expect(createHash('sha256').update(png).digest('hex')).toBe(shot.artifact);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('leaves no Chromium process and no cgroup of its leases behind', async () => {
    expect(sandboxedChromium()).toEqual([]);
    // The browser calls' leases (the demo's MCP servers hold leases of their own while connected).
    const leases = (await leaseRows(g)).filter((l) => l.holder.startsWith('invocation/'));
    expect(leases.length).toBeGreaterThanOrEqual(8);
    for (const { id, holder } of leases) expect(cgroupDirsNamed(id), holder).toEqual([]);
  });
});

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The mount table of some process on this host whose table holds `line`, or null. */
function sandboxMountTable(line: string): string | null {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const table = readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
      if (table.includes(line)) return table;
    } catch {
      // gone meanwhile
    }
  }
  return null;
}
