/**
 * The performance targets (the performance issue's list), each with what this run measured and
 * whether it is met: the lines the bench's summary ends with.
 */
import type { LoadResult } from './load.js';
import { memoryTargetLine } from './memory.js';
import type { MemoryBench } from './memory.js';
import type { Timing } from './measure.js';
import { ms, ratio, verdict, whole } from './rows.js';
import { sandboxTargetLine } from './sandbox.js';
import type { SandboxBench } from './sandbox.js';

/** What the targets are judged on, all from one run. */
export interface TargetInputs {
  /** Governed echo in-process, sequential, and the sum of its floors (insert + sign + Cedar). */
  inProcess: { sequential: Timing; floorSum: number };
  /** Governed echo over REST at 50 connections, with the gateway's CPU per call. */
  rest: LoadResult & { cpuMsPerCall: number };
  /** `/mcp` to server-everything's echo, the same client direct, and through supergateway. */
  mcp: { governed: Timing; direct: Timing; proxied: Timing };
  /** Sandboxed `demo/sh true` and bare bubblewrap with the same flags, 1 and 8 in flight. */
  sandbox: SandboxBench | { skipped: string };
  /** Gateway RSS growth for 100 MB of output through the shell, MCP and HTTP executors. */
  memory: MemoryBench;
}

/** Target 1: the in-process echo's p50 against 0.5 ms and 1.3× the sum of its floors. */
export function inProcessTargetLine(t: TargetInputs['inProcess']): string {
  const seq = t.sequential.p50;
  const floors = t.floorSum;
  return `1. in-process echo p50 ≤ 0.500 ms and ≤ 1.3× its floors: ${ms(seq)}, ${ratio(seq, floors)} of ${ms(floors)} (${verdict(seq <= 0.5 && seq <= 1.3 * floors)})`;
}

/** One line per target: what it asks, what this run measured, met or missed. */
export function targetLines(t: TargetInputs): string[] {
  const lines = [
    inProcessTargetLine(t.inProcess),
    `2. REST echo ≥ 5,000 calls/s at 50 connections, p99 ≤ 25 ms: ${whole(t.rest.perSecond)} calls/s, p99 ${t.rest.p99} ms, gateway CPU ${t.rest.cpuMsPerCall.toFixed(2)} ms/call (${verdict(t.rest.perSecond >= 5000 && t.rest.p99 <= 25)})`,
    `3. /mcp echo p50 below supergateway and ≤ 1.3× direct: ${ms(t.mcp.governed.p50)} vs supergateway ${ms(t.mcp.proxied.p50)}, ${ratio(t.mcp.governed.p50, t.mcp.direct.p50)} direct (${verdict(t.mcp.governed.p50 < t.mcp.proxied.p50 && t.mcp.governed.p50 <= 1.3 * t.mcp.direct.p50)})`,
  ];
  lines.push(sandboxTargetLine(t.sandbox));
  lines.push(
    '5. audit proofs < 1 ms at 1,000,000 records: measured by `npm run bench -- --audit-scale`',
    memoryTargetLine(t.memory),
  );
  return lines;
}
