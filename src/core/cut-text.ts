/**
 * `text` itself when it has at most `max` characters (UTF-16 code units), else its first `max`
 * (never half a surrogate pair) and "…".
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}
