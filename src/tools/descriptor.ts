import type { SideEffectClass } from '../core/index.js';

/** Kinds of tool execution (DESIGN §3 stage 8). */
export const ToolKind = {
  native: 'native',
  mcp: 'mcp',
  shell: 'shell',
  http: 'http',
  browser: 'browser',
  computerUse: 'computer-use',
} as const;
export type ToolKind = (typeof ToolKind)[keyof typeof ToolKind];

/**
 * A rule that raises a call's side-effect class from its input: when the value at `pointer`
 * (RFC 6901) matches, the effective class is at least `raiseTo`.
 */
export interface ClassRule {
  pointer: string;
  /** Matches when the value equals this JSON value. */
  equals?: unknown;
  /** Matches when the value equals one of these. */
  in?: unknown[];
  /** Matches when the value is a string that this regular expression matches. */
  matches?: string;
  raiseTo: SideEffectClass;
  /** Shown in the trace when the rule fires. */
  reason?: string;
}

/** One version of a tool (DESIGN §1). Immutable once published. */
export interface ToolDescriptor {
  id: string;
  version: string;
  kind: ToolKind;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  sideEffect: { class: SideEffectClass; rules?: ClassRule[] };
  /** Kind-specific execution configuration; for `native`, `{handler: string}`. */
  execution: Record<string, unknown>;
  /** Milliseconds the execute stage may take; defaults to the gateway's setting. */
  timeoutMs?: number;
  sandbox?: Record<string, unknown>;
  credentials?: Record<string, unknown>[];
}

/** `id@version`, the way tools are named in messages. */
export function toolRef(t: { id: string; version: string }): string {
  return `${t.id}@${t.version}`;
}
