import type { Page } from 'playwright-core';
import { exactOrigin } from '../../core/index.js';
import { EGRESS_ANSWER_HEADER } from '../../egress/index.js';
import type { BrowserStep } from './browser-steps.js';

/** Most elements one `extract` reads, and most characters it keeps of each. */
export const EXTRACT_BOUNDS = { elements: 100, characters: 10_000 } as const;

/** What `extract` reads of an element in the page (no DOM types in this project). */
interface PageElement {
  innerText?: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
}

/** What a step runs against. */
export interface StepContext {
  page: Page;
  /** Brokered values a `fill` may type, by secret name. Never put them in a result. */
  secrets: ReadonlyMap<string, BoundSecret>;
  /** Milliseconds left for the step. */
  timeoutMs: () => number;
  /** Stores a screenshot; undefined where the gateway keeps no artifacts. */
  storeArtifact?: (bytes: Uint8Array) => Promise<string>;
}

/** A brokered value and the exact origin of the only pages it may be typed into. */
export interface BoundSecret {
  value: string;
  /** As `exactOrigin` spells it; undefined (a descriptor published unbound): typed nowhere. */
  origin: string | undefined;
}

/** One step's result on the output: its action and what it saw (never a secret). */
export type StepResult = { action: BrowserStep['action'] } & Record<string, unknown>;

/** A step the executor itself refused or found failed, with a stable code. */
export class StepRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** False when nothing of the step reached a server (a refused or unconnectable request). */
    readonly reachedServer: boolean,
  ) {
    super(message);
    this.name = 'StepRefused';
  }
}

/**
 * Runs one step on the page and says what it saw.
 * @throws StepRefused for a refusal (egress, a secret into a non-password field); Playwright's
 *   errors for a step that failed (no such element, timeout, a crashed page).
 */
export async function runStep(step: BrowserStep, c: StepContext): Promise<StepResult> {
  const { page } = c;
  const timeout = c.timeoutMs();
  switch (step.action) {
    case 'goto': {
      const response = await page.goto(step.url, { timeout, waitUntil: 'load' });
      const refused = response?.headers()[EGRESS_ANSWER_HEADER.toLowerCase()];
      if (response && refused !== undefined) {
        const why = (await response.text().catch(() => '')).trim().slice(0, 500);
        throw new StepRefused(
          'EGRESS_REFUSED',
          `the egress proxy answered ${response.status()} for ${new URL(step.url).host}: ${why}`,
          false,
        );
      }
      return { action: 'goto', url: page.url(), status: response?.status() ?? null };
    }
    case 'click':
      await page.click(step.selector, { timeout });
      return { action: 'click', selector: step.selector };
    case 'fill': {
      if ('secret' in step) {
        const secret = c.secrets.get(step.secret);
        // One element, held: checked, then filled as it is, so a navigation in between detaches
        // it (the fill fails) instead of the selector finding a field of another page.
        const field = await page.locator(step.selector).first().elementHandle({ timeout });
        try {
          const seen = await field.evaluate((e) => {
            // Runs in the page: no DOM types here, so the element is read by its properties.
            const el = e as {
              tagName?: string;
              type?: string;
              ownerDocument?: { defaultView?: { origin?: string } | null };
            };
            return {
              masked: el.tagName === 'INPUT' && el.type === 'password',
              // The origin of the document that holds the field (a frame's, not the tab's).
              origin: el.ownerDocument?.defaultView?.origin ?? 'null',
            };
          });
          const pageOrigin = exactOrigin(seen.origin) ?? `an opaque origin (${seen.origin})`;
          if (secret?.origin === undefined || pageOrigin !== secret.origin)
            throw new StepRefused(
              'SECRET_ORIGIN',
              secret?.origin === undefined
                ? `the secret ${step.secret} is bound to no origin, so it is typed into no page: republish the tool with the origin whose pages may receive it (credentials[].inject.origin); nothing was typed`
                : `the secret ${step.secret} is bound to ${secret.origin}, but ${step.selector} is in a page of ${pageOrigin}; nothing was typed`,
              false,
            );
          if (!seen.masked)
            throw new StepRefused(
              'SECRET_FIELD',
              `${step.selector} is not a password field: a brokered secret is typed only into <input type="password">, which pages and screenshots show masked`,
              true,
            );
          await field.fill(secret.value, { timeout: c.timeoutMs() });
        } finally {
          await field.dispose().catch(() => undefined);
        }
        return { action: 'fill', selector: step.selector, secret: step.secret };
      }
      await page.fill(step.selector, step.value, { timeout });
      return { action: 'fill', selector: step.selector, characters: step.value.length };
    }
    case 'press':
      if (step.selector === undefined) await page.keyboard.press(step.key);
      else await page.press(step.selector, step.key, { timeout });
      return { action: 'press', key: step.key };
    case 'select': {
      const selected = await page.selectOption(step.selector, step.value, { timeout });
      return { action: 'select', selector: step.selector, selected };
    }
    case 'waitFor':
      if ('url' in step) {
        await page.waitForURL(step.url, { timeout });
        return { action: 'waitFor', url: page.url() };
      }
      await page.waitForSelector(step.selector, { timeout, state: 'visible' });
      return { action: 'waitFor', selector: step.selector };
    case 'extract': {
      const found = await page
        .locator(step.selector)
        .evaluateAll<(string | null)[], { attribute: string | null }>(
          (els, a) =>
            (els as unknown as PageElement[]).map((e) =>
              a.attribute === null
                ? (e.innerText ?? e.textContent ?? '')
                : e.getAttribute(a.attribute),
            ),
          { attribute: step.attribute ?? null },
        );
      const values = found
        .slice(0, EXTRACT_BOUNDS.elements)
        .map((v) => (v === null ? null : v.slice(0, EXTRACT_BOUNDS.characters)));
      return {
        action: 'extract',
        selector: step.selector,
        ...(step.attribute === undefined ? {} : { attribute: step.attribute }),
        values,
        ...(found.length > values.length ? { matched: found.length } : {}),
      };
    }
    case 'screenshot': {
      const png = await page.screenshot({ type: 'png', fullPage: step.fullPage ?? false, timeout });
      const size = pngSize(png);
      const artifact = c.storeArtifact ? await c.storeArtifact(png) : null;
      return {
        action: 'screenshot',
        mediaType: 'image/png',
        artifact,
        bytes: png.length,
        width: size.width,
        height: size.height,
      };
    }
  }
}

/** Width and height from a PNG's IHDR chunk (bytes 16–23). */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
}
