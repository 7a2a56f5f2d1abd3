/**
 * Argument templates of shell descriptors: each argv element is a literal string in which
 * `{/json/pointer}` is replaced by the scalar at that pointer of the validated input. A value
 * always stays inside its one argv element: no shell ever parses it.
 */
import { parseJsonPointer, resolveJsonPointer } from '../../core/index.js';

const PLACEHOLDER = /\{(\/[^{}]*)\}/g;

/** The input value at an RFC 6901 pointer (own members only), or undefined. */
function atPointer(value: unknown, pointer: string): unknown {
  const tokens = parseJsonPointer(pointer);
  return tokens === null ? undefined : resolveJsonPointer(value, tokens);
}

/** Why `template` names a placeholder that is no JSON pointer, or null when every one is. */
export function templateProblem(template: string): string | null {
  for (const [, pointer] of template.matchAll(PLACEHOLDER)) {
    if (parseJsonPointer(pointer!) === null)
      return `the placeholder {${pointer}} is not a JSON pointer (escape "~" as ~0 and "/" as ~1)`;
  }
  return null;
}

/**
 * Fills a template from the input.
 * @throws Error naming the pointer when the input has no scalar there (the call then fails
 *   before any effect).
 */
export function fillTemplate(template: string, input: unknown): string {
  return template.replace(PLACEHOLDER, (_m, pointer: string) => {
    const v = atPointer(input, pointer);
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    if (v === undefined)
      throw new Error(`the input has no value at ${pointer}, which the argv template needs`);
    throw new Error(`the input at ${pointer} is not a string, number or boolean`);
  });
}
