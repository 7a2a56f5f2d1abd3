import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';
import {
  cgroupDirsStartingWith,
  leaseRows,
  processesMatching,
  publishAgent,
  verifiedReceipt,
} from '../helpers/sandbox-tools.js';
import { DOWNLOAD_BODY, browserTool, missingChromium, startTestSite } from './browser-fixture.js';

const BROWSER_SANDBOX = { memoryMb: 768, pids: 1024 };
const ATTEMPT_TTL_MS = 2_000;

let g: DemoGateway;
let agent: string;
let site: Awaited<ReturnType<typeof startTestSite>>;

const unavailable = skipWithout('Chromium (Debian package chromium)', missingChromium());

describe.skipIf(unavailable)(
  'browser steps on pages that press, select, open windows and download',
  () => {
    beforeAll(async () => {
      site = await startTestSite();
      // A short attempt lease, and no periodic reaper pass during the test: the test runs it.
      g = await startDemoGateway({
        sandbox: { attemptTtlMs: ATTEMPT_TTL_MS, reapIntervalMs: 3_600_000 },
      });
      agent = await publishAgent(g, 'pages-agent', [
        browserTool(
          'test/interact',
          {
            allowedActions: ['goto', 'click', 'fill', 'press', 'select', 'waitFor', 'extract'],
          },
          { sandbox: { ...BROWSER_SANDBOX, egress: [`127.0.0.1:${site.port}`] } },
        ),
      ]);
    }, 60_000);

    afterAll(async () => {
      await g?.close();
      await site?.close();
    });

    let n = 0;
    async function browse(steps: unknown[], attempt?: string): Promise<InvocationRecord> {
      n += 1;
      const res = await g.invoke(agent, `pages-${n}`, {
        ...(call('test/interact', { steps }) as object),
        ...(attempt === undefined ? {} : { runId: 'run-1', attemptId: attempt }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    }

    interface Output {
      steps: Record<string, unknown>[];
      url: string | null;
      popups?: { url: string; closed: boolean }[];
      downloadsRefused?: { url: string; filename: string }[];
    }
    /**
     * One call walks the form, popup and download pages in turn, and the three tests after read
     * their page's part of it: no page needs a browser of its own, and starting a cold Chromium
     * is most of a call's time.
     */
    const pages = (origin: string) => ({
      form: [
        { action: 'goto', url: `${origin}/form` },
        { action: 'press', key: 'a' },
        { action: 'extract', selector: '#keys' },
        { action: 'select', selector: '#color', value: 'green' },
        { action: 'fill', selector: '#q', value: 'hello' },
        { action: 'press', selector: '#q', key: 'Enter' },
        { action: 'waitFor', url: `${origin}/echo?q=hello&color=green` },
        { action: 'extract', selector: 'p' },
      ],
      popup: [
        { action: 'goto', url: `${origin}/popup` },
        { action: 'click', selector: '#away' },
        { action: 'click', selector: '#open' },
        { action: 'click', selector: '#near' },
        { action: 'extract', selector: 'title' },
      ],
      download: [
        { action: 'goto', url: `${origin}/download` },
        { action: 'click', selector: '#save' },
        { action: 'click', selector: '#attach' },
        { action: 'extract', selector: 'title' },
      ],
    });
    type Page = keyof ReturnType<typeof pages>;
    let tour: Promise<InvocationRecord> | undefined;
    /** The calls without an attempt (each its own browser), for the last test. */
    const calls: InvocationRecord[] = [];
    /** The call's record and output (the first test that asks makes it), and one page's results. */
    async function toured(page: Page) {
      const all = pages(site.origin);
      tour ??= browse([...all.form, ...all.popup, ...all.download]).then((r) => {
        calls.push(r);
        return r;
      });
      const r = await tour;
      expect(r.status, JSON.stringify(r.error)).toBe('observed');
      const o = r.output as Output;
      const order: Page[] = ['form', 'popup', 'download'];
      const from = order.slice(0, order.indexOf(page)).reduce((n, p) => n + all[p].length, 0);
      return { r, o, steps: o.steps.slice(from, from + all[page].length) };
    }

    it('presses keys on the page and in a field, and selects an option: the form submits what was chosen', async () => {
      const { steps } = await toured('form');
      expect(steps[1]).toEqual({ action: 'press', key: 'a' });
      expect(steps[2]).toMatchObject({ values: ['[a]'] });
      expect(steps[3]).toEqual({ action: 'select', selector: '#color', selected: ['green'] });
      expect(steps[5]).toEqual({ action: 'press', key: 'Enter' });
      // The waitFor step saw the page reach the form's answer: the submission navigated.
      expect(steps[6]).toMatchObject({ action: 'waitFor' });
      expect(steps[7]).toMatchObject({ values: ['hello', 'green'] });
      expect(site.seen).toContain('GET /echo?q=hello&color=green');
    }, 90_000);

    it('closes new windows to another origin and lists every window; a window opened without a click is blocked', async () => {
      const { r, o, steps } = await toured('popup');
      const away = `http://127.0.0.1:${site.otherPort}/secret`;
      // The clicks opened windows; the page itself stayed.
      expect(steps[4]).toMatchObject({ values: ['Popups'] });
      expect(o.popups).toHaveLength(3);
      expect(o.popups).toEqual(
        expect.arrayContaining([
          { url: away, closed: true },
          { url: away, closed: true },
          { url: `${site.origin}/`, closed: false },
        ]),
      );
      expect(JSON.stringify(o)).not.toContain('the-unlisted-secret');
      // The clicked windows to the other origin asked the egress proxy and were refused (Chromium
      // may retry a refused request); the page's window.open at load (no click) was blocked: it is
      // not among the three windows above.
      const other = r.egress.filter((e) => e.host === '127.0.0.1' && e.port === site.otherPort);
      expect(other.length).toBeGreaterThanOrEqual(2);
      for (const e of other) expect(e.allowed).toBe(false);
    }, 90_000);

    it('refuses downloads, a download link and an attachment alike, and lists them', async () => {
      const { o, steps } = await toured('download');
      expect(steps[3]).toMatchObject({ values: ['Download'] });
      expect(o.downloadsRefused).toEqual([
        { url: `${site.origin}/file.bin`, filename: 'file.bin' },
        { url: `${site.origin}/attachment`, filename: 'file.bin' },
      ]);
      expect(o.url).toBe(`${site.origin}/download`);
      expect(filesHolding(g.sandboxRoot, DOWNLOAD_BODY)).toEqual([]);
    }, 90_000);

    /** Main Chromium processes of warm browsers (their profile is numbered; a call's own is not). */
    const warmBrowsers = () =>
      processesMatching('--user-data-dir=/workspace/.browser-profile-').filter(
        (p) => p.cmdline.startsWith('/usr/lib/chromium/chromium') && !p.cmdline.includes('--type='),
      );

    it('keeps one browser for the calls of an attempt (its cookies, storage and process), and ends it with the lease', async () => {
      const state = (r: InvocationRecord) => (r.output as Output).steps.at(-1);
      const first = await browse(
        [
          { action: 'goto', url: `${site.origin}/set` },
          { action: 'extract', selector: '#state' },
        ],
        'warm-a',
      );
      expect(first.status, JSON.stringify(first.error)).toBe('observed');
      expect(first.output).toMatchObject({ browser: 'started' });
      expect(state(first)).toMatchObject({ values: ['k=cookie-1|local-1'] });
      const running = warmBrowsers();
      expect(running).toHaveLength(1);
      const second = await browse(
        [
          { action: 'goto', url: `${site.origin}/state` },
          { action: 'extract', selector: '#state' },
        ],
        'warm-a',
      );
      expect(second.status, JSON.stringify(second.error)).toBe('observed');
      expect(second.output).toMatchObject({ browser: 'kept' });
      expect(state(second)).toMatchObject({ values: ['k=cookie-1|local-1'] });
      expect(warmBrowsers().map((p) => p.pid)).toEqual(running.map((p) => p.pid));
      // The kept browser's requests are the second call's, on its record.
      expect(second.egress.map((e) => [e.host, e.port, e.allowed])).toContainEqual([
        '127.0.0.1',
        site.port,
        true,
      ]);
      const leaseId = String(first.lease?.id);
      expect(second.lease?.id).toBe(leaseId);
      expect(cgroupDirsStartingWith(`${leaseId}.browser-`).length).toBeGreaterThan(0);

      // The attempt lease expires (each call extends it); the reaper ends it, and its browser.
      const row = (await leaseRows(g)).find((l) => l.id === leaseId);
      const { expiresAt } = JSON.parse(row!.record) as { expiresAt: string };
      expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(ATTEMPT_TTL_MS);
      await sleep(Math.max(0, Date.parse(expiresAt) - Date.now() + 50));
      expect(await g.gateway.execution.reaper!.runOnce()).toContain(leaseId);
      expect(warmBrowsers()).toEqual([]);
      expect(cgroupDirsStartingWith(`${leaseId}.browser-`)).toEqual([]);

      // A call outside an attempt has a browser of its own, gone with the call: no state is left.
      const alone = await browse([
        { action: 'goto', url: `${site.origin}/state` },
        { action: 'extract', selector: '#state' },
      ]);
      calls.push(alone);
      expect(alone.output).not.toHaveProperty('browser');
      expect(state(alone)).toMatchObject({ values: ['|null'] });
      expect(warmBrowsers()).toEqual([]);
    }, 90_000);

    it("records Chromium's own background calls as refused egress, on the record and the receipt", async () => {
      expect(calls).toHaveLength(2);
      for (const r of calls) {
        const own = r.egress.filter((e) => e.host !== '127.0.0.1');
        for (const e of own) {
          expect(e.allowed, `${e.host}:${e.port}`).toBe(false);
          expect(e.reason).toMatch(/not in the egress allow-list/);
        }
        const { predicate } = await verifiedReceipt(g, r.id);
        expect(predicate.egress).toEqual(r.egress);
      }
    });
  },
);

/** Files under `dir` (recursively) that hold `text`. */
function filesHolding(dir: string, text: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return [];
    if (st.isDirectory()) return filesHolding(path, text);
    return st.isFile() && readFileSync(path).includes(text) ? [path] : [];
  });
}
