import type { Command } from 'commander';

/** Writes a string as it is, anything else as indented JSON, to standard output. */
export function print(value: unknown): void {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
}

/** Writes lines to standard error: errors, refusals and progress, never the result. */
export function warn(...lines: string[]): void {
  for (const line of lines) process.stderr.write(`${line}\n`);
}

/** Adds `--json` to a command: print the gateway's answer as JSON instead of lines for people. */
export function withJson(command: Command): Command {
  return command.option('--json', "print the gateway's whole answer as JSON");
}

/**
 * Lines for the `details` of an error a person reads: each violation as `POINTER  MESSAGE` (the
 * pointers padded to one width), a `pointer` as `at POINTER`, other facts as `KEY: VALUE` (lists
 * joined, objects as compact JSON cut at 200 characters).
 */
export function detailLines(details: Record<string, unknown>): string[] {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(details)) {
    if (key === 'violations' && Array.isArray(value)) {
      const violations = value as { pointer?: unknown; message?: unknown }[];
      const pointers = violations.map((v) =>
        typeof v.pointer === 'string' && v.pointer !== '' ? v.pointer : '/',
      );
      const width = Math.max(...pointers.map((p) => p.length));
      violations.forEach((v, i) =>
        lines.push(`  ${pointers[i]!.padEnd(width)}  ${String(v.message)}`),
      );
    } else if (key === 'pointer' && typeof value === 'string') {
      lines.push(`  at ${value || '/'}`);
    } else if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) {
      lines.push(`  ${key}: ${value.length === 0 ? '(none)' : value.map(String).join(', ')}`);
    } else if (typeof value === 'object' && value !== null) {
      const json = JSON.stringify(value);
      lines.push(`  ${key}: ${json.length > 200 ? `${json.slice(0, 199)}…` : json}`);
    } else {
      lines.push(`  ${key}: ${String(value)}`);
    }
  }
  return lines;
}

/** Splits `ID@VERSION` at its last `@`. @returns undefined when either side is empty. */
export function splitRef(ref: string): { id: string; version: string } | undefined {
  const at = ref.lastIndexOf('@');
  if (at <= 0 || at === ref.length - 1) return undefined;
  return { id: ref.slice(0, at), version: ref.slice(at + 1) };
}
