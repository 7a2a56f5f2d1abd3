/**
 * Argument templates of shell descriptors: each argv element is a literal string in which
 * `{/json/pointer}` is replaced by the scalar at that pointer of the validated input. A value
 * always stays inside its one argv element: no shell ever parses it.
 */
const PLACEHOLDER = /\{(\/[^{}]*)\}/g;

/** The input value at an RFC 6901 pointer, or undefined. */
function atPointer(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let current = value;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[token];
  }
  return current;
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
