import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
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
