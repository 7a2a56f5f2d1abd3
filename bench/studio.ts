import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { loadConfig, openDemo } from '../src/app/index.js';
import { collectGarbage, percentile, timeInterleaved } from './measure.js';
import type { Timing } from './measure.js';

/** Debian's Chromium (never a downloaded browser). */
const CHROMIUM = '/usr/bin/chromium';
/** The Studio `npm run build` made (this file runs from dist-bench/bench/). */
const BUILT_STUDIO = fileURLToPath(new URL('../../dist/studio/', import.meta.url));

/** The Studio's first view, and the same browser loading the smallest page of the same server. */
export interface StudioBench {
  /** A fresh browser context: the sign-in page until its token field can be typed in. */
  signInPage: Timing;
  /**
   * The same span, ended when the page's own clock saw the token field in its document (the
   * driver's work of finding it excluded: its injected script, its round trips).
   */
  signInPageSeen: Timing;
  /** From pressing "Sign in" until the approvals inbox has rendered its list. */
  inbox: Timing;
  /** Both, end to end (without the typing). */
  firstView: Timing;
  /** Floor: a fresh context's page loading `/healthz` of the same gateway (navigation to `load`). */
  blank: Timing;
}

/**
 * The Studio's first view in headless Chromium against a listening demo gateway on `dataDir`:
 * each iteration a new browser context (empty cache, no cookie) opens `/studio/`, signs in as the
 * demo reviewer and waits for the approvals inbox, taking turns with the floor. Returns why not
 * when Chromium or the built Studio is missing.
 */
export async function studioBench(
  dataDir: string,
  iterations: number,
): Promise<StudioBench | { skipped: string }> {
  if (!existsSync(CHROMIUM)) return { skipped: `no ${CHROMIUM}` };
  if (!existsSync(BUILT_STUDIO)) return { skipped: `no built Studio: run npm run build` };
  const config = loadConfig(
    { dataDir, port: 0, demo: true, logRequests: false, studioDir: BUILT_STUDIO },
    {},
  );
  const { gateway, tokens } = await openDemo(config);
  let browser: Browser | undefined;
  try {
    const base = await gateway.listen();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    const b = browser;
    const parts = {
      signInPage: [] as number[],
      signInPageSeen: [] as number[],
      inbox: [] as number[],
      blank: [] as number[],
    };
    const studio = async (): Promise<void> => {
      const context = await b.newContext({ viewport: { width: 1280, height: 800 } });
      try {
        await context.addInitScript(watchForTokenField);
        const page = await context.newPage();
        const t0 = performance.now();
        // Ready means the field can be typed in, whether or not the page has finished loading.
        await page.goto(`${base}/studio/`, { waitUntil: 'commit' });
        const token = page.getByLabel('Token');
        await token.waitFor();
        const t1 = performance.now();
        const seen = await page.evaluate(
          () => (globalThis as { tokenFieldAt?: number }).tokenFieldAt,
        );
        if (seen === undefined) throw new Error('the page never saw its token field');
        parts.signInPageSeen.push(seen - (performance.timeOrigin + t0));
        await token.fill(tokens.reviewer);
        const t2 = performance.now();
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByText('No approvals waiting.').waitFor();
        const t3 = performance.now();
        parts.signInPage.push(t1 - t0);
        parts.inbox.push(t3 - t2);
      } finally {
        await context.close();
      }
    };
    const blank = async (): Promise<void> => {
      const context = await b.newContext({ viewport: { width: 1280, height: 800 } });
      try {
        const page = await context.newPage();
        const t0 = performance.now();
        const res = await page.goto(`${base}/healthz`);
        parts.blank.push(performance.now() - t0);
        if (res?.status() !== 200) throw new Error(`/healthz answered ${res?.status()}`);
      } finally {
        await context.close();
      }
    };
    // Taking turns; each side times only its page (not making and closing the context).
    await timeInterleaved(2, [studio, blank]);
    for (const samples of Object.values(parts)) samples.length = 0;
    collectGarbage();
    await timeInterleaved(iterations, [studio, blank]);
    return {
      signInPage: summary(parts.signInPage),
      signInPageSeen: summary(parts.signInPageSeen),
      inbox: summary(parts.inbox),
      firstView: summary(parts.signInPage.map((v, i) => v + parts.inbox[i]!)),
      blank: summary(parts.blank),
    };
  } finally {
    await browser?.close();
    await gateway.close();
  }
}

/**
 * Run in each page before its own scripts: notes on the page's clock (ms since the epoch, as
 * `performance.timeOrigin + performance.now()` in Node) when the token field is first in the
 * document.
 */
function watchForTokenField(): void {
  const g = globalThis as unknown as {
    tokenFieldAt?: number;
    document: { getElementById: (id: string) => unknown };
    MutationObserver: new (f: () => void) => {
      observe: (n: unknown, o: object) => void;
      disconnect: () => void;
    };
    performance: { timeOrigin: number; now: () => number };
  };
  const observer = new g.MutationObserver(() => {
    if (g.document.getElementById('token') === null) return;
    g.tokenFieldAt = g.performance.timeOrigin + g.performance.now();
    observer.disconnect();
  });
  observer.observe(g.document, { childList: true, subtree: true });
}

/** A {@link Timing} of samples in ms. */
function summary(samples: number[]): Timing {
  const total = samples.reduce((a, b) => a + b, 0);
  return {
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    perSecond: samples.length / (total / 1000),
  };
}
