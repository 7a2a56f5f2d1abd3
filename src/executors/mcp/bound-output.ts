import { utf8Prefix } from '../../core/index.js';

/**
 * An MCP tool's output whose JSON is over `max` bytes (UTF-8), cut to fit: text content is cut
 * (never inside a character) and other content dropped once half of `max` is spent, structured
 * content is dropped, and `truncated` says how large it was and how much content is kept. An
 * output within `max` is returned as it is. `size` is the output's JSON size when the caller
 * has it already (a large answer is not serialized twice).
 */
export function boundOutput(
  out: Record<string, unknown>,
  max: number,
  size = Buffer.byteLength(JSON.stringify(out)),
): Record<string, unknown> {
  if (size <= max) return out;
  let budget = Math.floor(max / 2);
  const content = (out.content as Record<string, unknown>[]).flatMap((c) => {
    if (budget <= 0) return [];
    if (c.type === 'text' && typeof c.text === 'string') {
      const text = utf8Prefix(c.text, budget);
      budget -= Buffer.byteLength(text);
      return [{ type: 'text', text }];
    }
    const len = Buffer.byteLength(JSON.stringify(c));
    if (len > budget) return [];
    budget -= len;
    return [c];
  });
  const { structuredContent: _dropped, ...rest } = out;
  return {
    ...rest,
    content,
    truncated: { originalBytes: size, keptBytes: Buffer.byteLength(JSON.stringify(content)) },
  };
}
