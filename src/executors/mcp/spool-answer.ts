import type { CapturedStream, OutputCapture } from '../../invocation/index.js';

/** Bytes handed to the capture at a time, so the redactor's work and copies stay this small. */
const CHUNK = 64 * 1024;

/**
 * Passes an upstream's answer (its JSON) through an output capture, the way a shell tool's stdout
 * passes: redacted on the way and spooled to an artifact once past the capture's bound. So an
 * answer cut for size is kept whole, with the secrets the agent must not see already removed, by
 * the same code that keeps shell and HTTP output.
 */
export async function spoolAnswer(json: Buffer, capture: OutputCapture): Promise<CapturedStream> {
  for (let at = 0; at < json.length; at += CHUNK) capture.write(json.subarray(at, at + CHUNK));
  return capture.end();
}
