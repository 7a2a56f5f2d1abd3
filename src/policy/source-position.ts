/** A 1-based line and column in a policy text. */
interface SourcePosition {
  line: number;
  column: number;
}

/**
 * The line and column of a byte offset into `text`, as Cedar reports offsets in UTF-8 bytes.
 * Columns count characters (UTF-16 code units), the way editors show them.
 */
export function sourcePosition(text: string, byteOffset: number): SourcePosition {
  const before = Buffer.from(text, 'utf8').subarray(0, byteOffset).toString('utf8');
  const lastNewline = before.lastIndexOf('\n');
  let line = 1;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line += 1;
  return { line, column: before.length - lastNewline };
}
