import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startDemoGateway } from './gateway-fixture.js';
import type { DemoGateway, DemoGatewayOptions } from './gateway-fixture.js';
import { missingCommand } from './prerequisites.js';

/** Debian's Chromium, which the Studio's tests drive (never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';

/** Null when Chromium can be driven here, else why not (for `skipWithout`). */
export function chromiumProblem(): string | null {
  return missingCommand(CHROMIUM);
}

/** Vite's command line, run with this Node. */
const VITE = fileURLToPath(new URL('../../node_modules/vite/bin/vite.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Builds the Studio from its sources into a fresh temporary folder, so a test drives exactly the
 * code it is run with (never a stale `dist/studio/`). Returns the folder and a remover.
 */
export function buildStudio(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-studio-'));
  const run = spawnSync(
    process.execPath,
    [
      VITE,
      'build',
      '--config',
      'studio/vite.config.js',
      '--outDir',
      dir,
      '--emptyOutDir',
      '--logLevel',
      'warn',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`building the Studio failed:\n${run.stdout}${run.stderr}`);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts headless Chromium. Close it with `browser.close()` (safe to repeat). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root (as in CI) cannot use Chromium's own sandbox; the pages are our own test pages.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}

/** Signs in on the Studio's sign-in page with `token`, and waits for the views. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/studio/`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** axe-core, injected into a page to check its accessibility. */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical findings on the page as it is now. */
export async function seriousViolations(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  const found = await p.evaluate(async () => {
    type Finding = { id: string; impact: string | null; help: string };
    const { axe } = globalThis as unknown as {
      axe: { run: () => Promise<{ violations: Finding[] }> };
    };
    return (await axe.run()).violations;
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help}`);
}

/** The Studio of {@link useStudio}: a listening demo gateway serving a fresh build, and Chromium. */
export interface StudioSession {
  /** The demo gateway (set once the suite's `beforeAll` ran). */
  readonly gateway: DemoGateway;
  /** The folder of the Studio's build. */
  readonly dir: string;
  /** The gateway's base URL. */
  url(): string;
  /** A new page in a new browser context (1280×800), closed after the suite. */
  page(): Promise<Page>;
  /**
   * Writes a full-page screenshot `name`.png of `page` into the build's folder, or into the folder
   * `GATEHOUSE_STUDIO_SHOTS` names (to refresh the README's images under docs/images/).
   */
  screenshot(page: Page, name: string): Promise<void>;
}

/**
 * Builds the Studio, starts a listening demo gateway serving it and launches Chromium before the
 * suite; closes every context, the browser and the gateway and removes the build after it. Call
 * inside the `describe` (guarded by `skipWithout(..., chromiumProblem())`). `options` go to the
 * demo gateway (its `config` gets the build's folder added).
 */
export function useStudio(options: DemoGatewayOptions = {}): StudioSession {
  let gateway: DemoGateway | undefined;
  let browser: Browser | undefined;
  let studio: { dir: string; remove: () => void } | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    studio = buildStudio();
    gateway = await startDemoGateway({
      ...options,
      listen: true,
      config: { ...options.config, studioDir: studio.dir },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const c of contexts.splice(0)) await c.close();
    await browser?.close();
    await gateway?.close();
    studio?.remove();
  });
  const started = <T>(what: string, value: T | undefined): T => {
    if (value === undefined) throw new Error(`the Studio's ${what} is not started`);
    return value;
  };
  return {
    get gateway() {
      return started('gateway', gateway);
    },
    get dir() {
      return started('build', studio).dir;
    },
    url() {
      const url = started('gateway', gateway).url;
      if (!url) throw new Error('the gateway is not listening');
      return url;
    },
    async page() {
      const context = await started('browser', browser).newContext({
        viewport: { width: 1280, height: 800 },
      });
      contexts.push(context);
      return context.newPage();
    },
    async screenshot(page, name) {
      const folder = process.env.GATEHOUSE_STUDIO_SHOTS ?? started('build', studio).dir;
      await page.screenshot({ path: join(folder, `${name}.png`), fullPage: true });
    },
  };
}
