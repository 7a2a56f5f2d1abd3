/** The most lines either side a diff aligns line by line; longer texts are shown whole, replaced. */
const MAX_LINES = 1000;

/**
 * A unified-style diff of two texts, line by line (longest common subsequence): unchanged lines
 * start with a space, removed with `-`, added with `+`. Texts past {@link MAX_LINES} lines are
 * shown as all removed then all added, so a huge schema never stalls the page.
 */
export function lineDiff(before: string, after: string): string {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  if (a.length > MAX_LINES || b.length > MAX_LINES)
    return [...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)].join('\n');
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () =>
    new Array<number>(b.length + 1).fill(0),
  );
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] =
        a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(` ${a[i++]}`);
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      // Removed lines before added ones, as unified diffs show a replaced line.
      out.push(`-${a[i++]}`);
    } else {
      out.push(`+${b[j++]}`);
    }
  }
  return out.join('\n');
}

/** A value as the diff shows it: strings as they are, the rest as pretty JSON, absent as empty. */
export function diffText(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}
