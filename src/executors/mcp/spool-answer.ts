import type { CapturedStream, OutputCapture } from '../../invocation/index.js';

/** Characters handed to the capture at a time, so the redactor's work and copies stay this small. */
const CHUNK = 64 * 1024;

/**
 * Passes an upstream's answer (its JSON) through an output capture, the way a shell tool's stdout
 * passes: redacted on the way and spooled to an artifact once past the capture's bound. So an
 * answer cut for size is kept whole, with the secrets the agent must not see already removed, by
 * the same code that keeps shell and HTTP output.
 */
export async function spoolAnswer(json: string, capture: OutputCapture): Promise<CapturedStream> {
  // Encoded a slice at a time, never as one buffer the size of the answer; a slice never ends
  // between the two halves of a surrogate pair (each half alone would encode as U+FFFD).
  for (let at = 0; at < json.length;) {
    let end = Math.min(at + CHUNK, json.length);
    if (end < json.length && isHighSurrogate(json.charCodeAt(end - 1))) end += 1;
    capture.write(Buffer.from(json.slice(at, end), 'utf8'));
    at = end;
  }
  return capture.end();
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
