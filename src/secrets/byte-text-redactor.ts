import { Redactor } from './redactor.js';
import type { BrokeredValue } from './redactor.js';

/**
 * A redactor of text where each character stands for one byte (`latin1`, as Node gives HTTP header
 * values, and as a body of any bytes can be read without loss), for brokered values only (no
 * generic secret patterns: an upstream's own tokens in its answer are the program's business).
 * Each value is looked for as its UTF-8 bytes read that way, and in its encoded forms (base64,
 * hex, …), which are ASCII either way.
 */
export function byteTextRedactor(values: readonly BrokeredValue[]): {
  text(value: string): string;
  stream(): { push(chunk: string): string; end(): string };
} {
  const asBytes = values.map((v) => ({
    name: v.name,
    value: Buffer.from(v.value, 'utf8').toString('latin1'),
  }));
  const redactor = new Redactor([...values, ...asBytes], { patterns: false });
  return {
    text: (value) => redactor.redactText(value).text,
    stream: () => redactor.stream(),
  };
}
