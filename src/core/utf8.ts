/**
 * The longest prefix of `text` whose UTF-8 encoding is at most `maxBytes` bytes, never ending in
 * part of a character (a code point, so never half a surrogate pair). `text` itself when it fits.
 */
export function utf8Prefix(text: string, maxBytes: number): string {
  // Each UTF-16 code unit is at most 3 UTF-8 bytes: short text fits without encoding it.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // A continuation byte (0b10xxxxxx) at the cut means the cut is inside a character: back off.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
