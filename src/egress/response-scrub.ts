import { Transform } from 'node:stream';
import type { OutgoingHttpHeaders } from 'node:http';

/**
 * What the egress proxy does to the answer of a plain-HTTP request it added a credential to: an
 * upstream that echoes request headers (many do, in errors or debug bodies) would otherwise hand
 * the credential to the sandboxed program, which must never hold it. Works on text where each
 * character is one byte (`latin1`), as Node gives header values, so a body of any bytes survives.
 */
export interface ResponseScrub {
  /** The value with every added credential, in every form, replaced by a marker. */
  text(value: string): string;
  /** A scrubber for one body: `push` returns what no later chunk can change, `end` the rest. */
  stream(): { push(chunk: string): string; end(): string };
}

/** The response headers with `scrub` applied to every value; the length no longer holds. */
export function scrubHeaders(
  headers: OutgoingHttpHeaders,
  scrub: ResponseScrub,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'content-length' || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.map((v) => scrub.text(v)) : scrub.text(String(value));
  }
  return out;
}

/** A byte stream passed through a scrubber of `scrub`, with back-pressure. */
export function scrubBody(scrub: ResponseScrub): Transform {
  const s = scrub.stream();
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, Buffer.from(s.push(chunk.toString('latin1')), 'latin1'));
    },
    flush(done) {
      done(null, Buffer.from(s.end(), 'latin1'));
    },
  });
}

/**
 * Why the body of an answer to a request that carried a brokered credential is withheld, or null:
 * the request asked for `identity`, and a compressed body hides an echoed credential from the
 * redactor. Used by the egress proxy and the HTTP executor alike.
 */
export function compressedAnswer(contentEncoding: string | null | undefined): string | null {
  const coding = contentEncoding?.trim().toLowerCase();
  if (coding === undefined || coding === '' || coding === 'identity') return null;
  return `the upstream answered with content-encoding ${coding} although the request asked for identity; a compressed answer to a request that carries a brokered credential cannot be checked for that credential, so it is withheld`;
}
