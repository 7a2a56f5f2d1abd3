/**
 * Browser and computer-use calls: a governed browser call cold (a lease of its own) and warm (one
 * attempt's kept browser), each beside playwright-core driving the same Chromium bare (no sandbox,
 * no gateway) through the same steps on the same page; and a computer-use screenshot call on a kept
 * desktop beside the same screenshot command on a bare Xvfb. Each governed side takes turns with
 * its floor.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { loadConfig, openDemo } from '../src/app/index.js';
import { collectGarbage, timeInterleaved } from './measure.js';
import type { Timing } from './measure.js';

const CHROMIUM = '/usr/lib/chromium/chromium';
/** The bare Xvfb's display: one no gateway desktop uses (theirs live in their own namespaces). */
const BARE_DISPLAY = ':93';

/** What the browser rows measured, or why they were skipped. */
export type BrowserBench =
  | {
      cold: Timing;
      coldFloor: Timing;
      warm: Timing;
      warmFloor: Timing;
      screenshot: Timing | null;
      screenshotFloor: Timing | null;
      screenshotSkipped?: string;
    }
  | { skipped: string };

/**
 * Runs `coldCalls` cold and `warmCalls` warm browser calls (goto + extract of the demo ticket
 * board's heading through `demo/browse`), and `warmCalls` computer-use screenshots
 * (`demo/desktop`), each taking turns with its floor.
 */
export async function browserBench(
  dataDir: string,
  coldCalls: number,
  warmCalls: number,
): Promise<BrowserBench> {
  if (!existsSync(CHROMIUM)) return { skipped: `${CHROMIUM} is not installed` };
  const config = loadConfig(
    { dataDir, port: 0, demo: true, logRequests: false, logLevel: 'silent' },
    {},
  );
  const { gateway, tokens } = await openDemo(config);
  try {
    if (gateway.execution.sandboxProblem) return { skipped: gateway.execution.sandboxProblem };
    const agent = gateway.directory.authenticate(tokens.agent)!;
    const board = config.sandbox.egressAllow.find((a) => a.startsWith('127.0.0.1:'));
    if (!board) return { skipped: 'the demo ticket service is not in the egress allow-list' };
    const url = `http://${board}/`;
    const steps = [
      { action: 'goto', url },
      { action: 'extract', selector: 'h1' },
    ];
    const invoke = async (
      tool: string,
      input: unknown,
      key: string,
      attempt?: string,
    ): Promise<Record<string, unknown>> => {
      const r = await gateway.invocations.invoke(agent, {
        tool: { id: tool, version: '1.0.0' },
        input,
        environment: 'dev',
        idempotencyKey: key,
        ...(attempt === undefined ? {} : { runId: 'bench', attemptId: attempt }),
      });
      if (r.status !== 'observed')
        throw new Error(`${tool} ended ${r.status}: ${JSON.stringify(r.error)}`);
      return r.output as Record<string, unknown>;
    };
    const browse = (key: string, attempt?: string) =>
      invoke('demo/browse', { steps }, key, attempt);
    const bareSteps = async (page: Page): Promise<void> => {
      await page.goto(url, { waitUntil: 'load' });
      await page.locator('h1').evaluateAll((els) => els.length);
    };

    await browse('cold-warmup');
    collectGarbage();
    const [cold, coldFloor] = await timeInterleaved(coldCalls, [
      (i) => browse(`cold-${i}`),
      async () => {
        const browser = await launchBare();
        try {
          await bareSteps(await browser.newPage({ viewport: { width: 1280, height: 800 } }));
        } finally {
          await browser.close();
        }
      },
    ]);

    const attempt = `warm-${Date.now()}`;
    const kept = await browse('warm-start', attempt);
    if (kept.browser !== 'started') throw new Error('the attempt did not start a warm browser');
    const bare = await launchBare();
    let warm: Timing;
    let warmFloor: Timing;
    try {
      const page = await bare.newPage({ viewport: { width: 1280, height: 800 } });
      await bareSteps(page);
      collectGarbage();
      [warm, warmFloor] = (await timeInterleaved(warmCalls, [
        async (i) => {
          const out = await browse(`warm-${i}`, attempt);
          if (out.browser !== 'kept') throw new Error('the warm browser was not kept');
        },
        () => bareSteps(page),
      ])) as [Timing, Timing];
    } finally {
      await bare.close();
    }

    const shots = await screenshotRows(invoke, warmCalls);
    return { cold: cold!, coldFloor: coldFloor!, warm, warmFloor, ...shots };
  } finally {
    await gateway.close();
  }
}

/** Chromium started by playwright-core as any script would: no sandbox of ours, no proxy. */
function launchBare(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

/** A computer-use screenshot on a kept desktop beside `import` on a bare Xvfb of the same size. */
async function screenshotRows(
  invoke: (tool: string, input: unknown, key: string, attempt?: string) => Promise<unknown>,
  calls: number,
): Promise<{
  screenshot: Timing | null;
  screenshotFloor: Timing | null;
  screenshotSkipped?: string;
}> {
  for (const tool of ['Xvfb', 'import', 'xterm'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      return { screenshot: null, screenshotFloor: null, screenshotSkipped: `${tool} is missing` };
  const attempt = `desktop-${Date.now()}`;
  const shot = { actions: [{ action: 'screenshot' }] };
  await invoke('demo/desktop', shot, `${attempt}-start`, attempt);
  const xvfb = await startXvfb();
  try {
    const bareShot = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const child = spawn('import', ['-window', 'root', '-resize', '1024x768!', 'png:-'], {
          env: { ...process.env, DISPLAY: BARE_DISPLAY },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        child.stdout.resume();
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve() : reject(new Error(`import exited ${code}`)),
        );
      });
    await bareShot();
    collectGarbage();
    const [screenshot, screenshotFloor] = await timeInterleaved(calls, [
      (i) => invoke('demo/desktop', shot, `${attempt}-${i}`, attempt),
      bareShot,
    ]);
    return { screenshot: screenshot!, screenshotFloor: screenshotFloor! };
  } finally {
    xvfb.kill('SIGKILL');
  }
}

/** Xvfb on {@link BARE_DISPLAY} at the demo desktop's size, once it answers. */
async function startXvfb(): Promise<ChildProcess> {
  const xvfb = spawn('Xvfb', [BARE_DISPLAY, '-screen', '0', '1024x768x24', '-nolisten', 'tcp'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 500; i++) {
    const probe = spawnSync('xdpyinfo', [], { env: { ...process.env, DISPLAY: BARE_DISPLAY } });
    if (probe.status === 0) return xvfb;
    if (probe.error) {
      // No xdpyinfo: ask import itself.
      const shot = spawnSync('import', ['-window', 'root', 'png:-'], {
        env: { ...process.env, DISPLAY: BARE_DISPLAY },
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      if (shot.status === 0) return xvfb;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  xvfb.kill('SIGKILL');
  throw new Error(`Xvfb ${BARE_DISPLAY} did not come up`);
}
