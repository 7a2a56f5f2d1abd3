/** The bench's table: how rows are written, and the rows of the browser and Studio benches. */
import type { BrowserBench } from './browser.js';
import type { LoadResult } from './load.js';
import type { Timing } from './measure.js';
import type { StudioBench } from './studio.js';

/** Milliseconds, to the microsecond. */
export const ms = (v: number): string => `${v.toFixed(3)} ms`;
/** Microseconds from milliseconds. */
export const us = (v: number): string => `${(v * 1000).toFixed(1)} µs`;
/** A whole number with thousands separators. */
export const whole = (v: number): string => Math.round(v).toLocaleString('en-US');
/** Met or missed, for a target line. */
export const verdict = (met: boolean): string => (met ? 'met' : 'missed');
/** `a` as a multiple of `b`. */
export const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
/** Milliseconds as autocannon gives them (whole). */
export const loadMs = (v: number): string => `${v} ms`;

/** A row of a timed run: p50, p99 and rate in `unit`, and a note. */
export function timingRow(
  name: string,
  t: Timing,
  unit: (v: number) => string,
  note: string,
): string[] {
  return [name, unit(t.p50), unit(t.p99), whole(t.perSecond), note];
}

/** A row of a load run: `connections` for `seconds`, and what it got wrong; `extra` appended. */
export function loadRow(
  name: string,
  r: LoadResult,
  load: { connections: number | string; seconds: number },
  extra = '',
): string[] {
  return [
    name,
    loadMs(r.p50),
    loadMs(r.p99),
    whole(r.perSecond),
    `${load.connections} conns, ${load.seconds} s; non-2xx ${r.non2xx}, errors ${r.errors}${extra}`,
  ];
}

/** The browser and computer-use rows, each governed side beside its floor. */
export function browserRows(
  b: BrowserBench,
  o: { coldCalls: number; warmCalls: number; warmTarget: number },
): string[][] {
  if ('skipped' in b) return [['browser calls: skipped', '-', '-', '-', b.skipped]];
  const rows = [
    timingRow(
      'governed demo/browse goto + extract, cold (a lease and Chromium of its own)',
      b.cold,
      ms,
      `in-process, sandboxed Chromium, ${o.coldCalls} calls, taking turns with the row below`,
    ),
    timingRow(
      'floor: playwright-core launching the same Chromium bare, same steps, closed',
      b.coldFloor,
      ms,
      'no sandbox, no proxy, no gateway',
    ),
    timingRow(
      'governed demo/browse goto + extract, warm (one attempt, browser kept)',
      b.warm,
      ms,
      `${o.warmCalls} calls of one attempt, taking turns with the row below`,
    ),
    timingRow(
      'floor: the same steps on a bare Chromium page kept open',
      b.warmFloor,
      ms,
      `target governed/floor p50 ≤ ${o.warmTarget}×: ${(b.warm.p50 / b.warmFloor.p50).toFixed(2)}×`,
    ),
  ];
  if (b.screenshot === null || b.screenshotFloor === null)
    rows.push(['computer-use screenshot: skipped', '-', '-', '-', b.screenshotSkipped ?? '']);
  else
    rows.push(
      timingRow(
        'governed demo/desktop screenshot, desktop kept (one attempt)',
        b.screenshot,
        ms,
        `1024×768 PNG, ${o.warmCalls} calls, taking turns with the row below`,
      ),
      timingRow(
        'floor: ImageMagick import of a bare Xvfb of the same size',
        b.screenshotFloor,
        ms,
        'no sandbox, no driver, no gateway',
      ),
    );
  return rows;
}

/** The Studio's rows of the table. */
export function studioRows(studio: StudioBench | { skipped: string }, views: number): string[][] {
  if ('skipped' in studio) return [['Studio first view: skipped', '-', '-', '-', studio.skipped]];
  return [
    timingRow(
      'Studio first view: sign-in page → approvals inbox rendered',
      studio.firstView,
      ms,
      `headless Chromium, new context each (empty cache), ${views} views, taking turns with the floor; typing excluded`,
    ),
    timingRow('  of which: sign-in page ready to type', studio.signInPage, ms, ''),
    timingRow(
      '    the same, by the page: its token field in the document',
      studio.signInPageSeen,
      ms,
      "the page's own clock: the driver's work of finding the field (injected script, round trips) excluded",
    ),
    timingRow('  of which: Sign in → inbox rendered', studio.inbox, ms, ''),
    timingRow(
      'floor: the same Chromium loading /healthz of the same gateway',
      studio.blank,
      ms,
      'new context each, navigation to load',
    ),
  ];
}

/** The Studio's summary line against its target (empty when skipped). */
export function studioSummary(studio: StudioBench | { skipped: string }, targetMs: number): string {
  if ('skipped' in studio) return '';
  const { p50, p99 } = studio.firstView;
  return `Studio: first view p50 ${ms(p50)} (p99 ${ms(p99)}) vs target < ${targetMs} ms (${p99 < targetMs ? 'met' : 'missed'}); floor ${ms(studio.blank.p50)}.\n`;
}
