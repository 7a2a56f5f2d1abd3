/** Timing helpers for the benchmarks: samples in nanoseconds, summaries in ms or µs. */
import { readFileSync } from 'node:fs';

/** What a batch of timed operations came to. */
export interface Timing {
  /** Median, in milliseconds. */
  p50: number;
  /** 99th percentile, in milliseconds. */
  p99: number;
  /** Operations per second over the batch's wall time. */
  perSecond: number;
}

/** The `p`-th percentile (0–100) of `samples`, nearest rank. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

function summarize(samplesNs: readonly number[], wallNs: number): Timing {
  return {
    p50: percentile(samplesNs, 50) / 1e6,
    p99: percentile(samplesNs, 99) / 1e6,
    perSecond: samplesNs.length / (wallNs / 1e9),
  };
}

function now(): number {
  return Number(process.hrtime.bigint());
}

/** Runs `fn` `n` times, one after another, timing each call. */
export async function timeSequential(
  n: number,
  fn: (i: number) => Promise<unknown>,
): Promise<Timing> {
  const samples: number[] = [];
  const start = now();
  for (let i = 0; i < n; i++) {
    const t = now();
    await fn(i);
    samples.push(now() - t);
  }
  return summarize(samples, now() - start);
}

/**
 * Runs each of `fns` `n` times, one call at a time, taking turns (the order rotates every round),
 * so drift on the machine falls on every side alike. Calls per second is over each side's own
 * time.
 */
export async function timeInterleaved(
  n: number,
  fns: readonly ((i: number) => Promise<unknown>)[],
): Promise<Timing[]> {
  const samples = fns.map((): number[] => []);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < fns.length; k++) {
      const side = (i + k) % fns.length;
      const t = now();
      await fns[side]!(i);
      samples[side]!.push(now() - t);
    }
  }
  return samples.map((s) =>
    summarize(
      s,
      s.reduce((a, b) => a + b, 0),
    ),
  );
}

/** Runs `fn` `n` times in total with `inFlight` calls outstanding at all times, timing each. */
export async function timeConcurrent(
  n: number,
  inFlight: number,
  fn: (i: number) => Promise<unknown>,
): Promise<Timing> {
  const samples: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const t = now();
      await fn(i);
      samples.push(now() - t);
    }
  };
  const start = now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return summarize(samples, now() - start);
}

/** Runs a synchronous `fn` `n` times, timing each call. */
export function timeSync(n: number, fn: (i: number) => unknown): Timing {
  const samples: number[] = [];
  const start = now();
  for (let i = 0; i < n; i++) {
    const t = now();
    fn(i);
    samples.push(now() - t);
  }
  return summarize(samples, now() - start);
}

/** Collects garbage when node runs with `--expose-gc`, so one measurement's garbage is not the next's. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Rows of cells as aligned, markdown-style table text; the first and last columns align left. */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const left = (c: number): boolean => c === 0 || c === header.length - 1;
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, c) => (left(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => (left(c) ? `-${'-'.repeat(w)}-` : `-${'-'.repeat(w)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A process's CPU time so far (user + system), in ms, from /proc (Linux only). */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
