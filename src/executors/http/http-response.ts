import { cutNote } from '../../invocation/index.js';
import type { CapturedStream, CutNote, OutputCapture } from '../../invocation/index.js';

/** Response headers a tool's output shows; the rest (cookies, server details) stay out. */
export const SAFE_RESPONSE_HEADERS = [
  'content-type',
  'content-length',
  'etag',
  'last-modified',
  'location',
  'retry-after',
  'x-request-id',
  'request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
] as const;

/** What an `http` call's output holds: status, the safe headers, the body. */
export interface HttpOutput {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON and whole; else its text (cut at the bound); null without a body. */
  body: unknown;
  /** When the body was cut: its size and the artifact holding it whole. */
  bodyTruncated?: CutNote;
  /** Why the body is not shown (null then): a compressed answer to a credentialed request. */
  bodyWithheld?: string;
}

/** The body as read: captured (redacted, bounded, spooled) and whether it arrived whole. */
export interface ReadBody {
  captured: CapturedStream | null;
  /** Set when the body broke off: the error. */
  error?: unknown;
}

/**
 * Streams a response body into a capture chunk by chunk (never held whole in memory), until its
 * end or a failure (reset, abort), which is returned, not thrown.
 */
export async function readBody(response: Response, capture: OutputCapture): Promise<ReadBody> {
  if (response.body === null) return { captured: null };
  let error: unknown;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
      capture.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  } catch (err) {
    error = err;
  }
  const captured = await capture.end();
  return error === undefined ? { captured } : { captured, error };
}

/**
 * The output of a response, and the same output as the upstream sent it (before redaction), for
 * the full output's digest when they differ.
 */
export function httpOutput(
  response: Response,
  body: CapturedStream | null,
): { output: HttpOutput; full?: HttpOutput } {
  const headers: Record<string, string> = {};
  for (const name of SAFE_RESPONSE_HEADERS) {
    const v = response.headers.get(name);
    if (v !== null) headers[name] = v;
  }
  const output: HttpOutput = { status: response.status, headers, body: null };
  if (body === null) return { output };
  const json = /\bjson\b/i.test(headers['content-type'] ?? '');
  if (body.truncated) {
    output.body = body.text;
    output.bodyTruncated = cutNote(body);
    return { output, full: { ...output, body: body.raw } };
  }
  output.body = json ? parseOr(body.text) : body.text;
  if (typeof body.raw === 'string' && body.raw === body.text) return { output };
  return {
    output,
    full: { ...output, body: json && typeof body.raw === 'string' ? parseOr(body.raw) : body.raw },
  };
}

/** The message of an error body: `message`, `error`, `detail` or `title`, else its text's start. */
export function bodyMessage(body: unknown): string {
  if (typeof body === 'string') return body.trim().slice(0, 300);
  if (typeof body !== 'object' || body === null) return '';
  const b = body as Record<string, unknown>;
  for (const key of ['message', 'error', 'detail', 'title', 'error_description']) {
    const v = b[key];
    if (typeof v === 'string') return v.slice(0, 300);
    if (
      typeof v === 'object' &&
      v !== null &&
      typeof (v as { message?: unknown }).message === 'string'
    )
      return (v as { message: string }).message.slice(0, 300);
  }
  return JSON.stringify(body).slice(0, 300);
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
