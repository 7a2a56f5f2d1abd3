import { randomUUID } from 'node:crypto';
import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCode } from '../core/index.js';

/** What Node's HTTP parser reports about a request it could not read (`clientError`). */
interface ParserError {
  code?: string;
  reason?: string;
}

/**
 * The answer to a request Node could not parse, before any route or hook runs: the status Node's
 * parser implies (431 headers too large, 408 too slow, 400 not HTTP) with our error body, so a
 * client reads the same `{error: {code, message, details}}` here as everywhere else. Undefined
 * when there is nobody to answer (the client reset the connection).
 */
export function clientErrorAnswer(err: ParserError): { status: number; text: string } | undefined {
  if (err.code === 'ECONNRESET') return undefined;
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          `The request line and headers together are larger than this gateway accepts (${maxHeaderSize} bytes): shorten the URL (ids, query) or the headers.`,
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            408,
            'The request did not arrive in time (its headers and body have a deadline): send the whole request promptly, then retry.',
          ]
        : [
            400,
            `The request is not valid HTTP/1.1${err.reason ? ` (${err.reason.replace(/\.$/, '')})` : ''}: check the request line (method, a path without spaces, HTTP/1.1) and the header lines.`,
          ];
  const body = JSON.stringify({
    error: { code: ErrorCode.INVALID_INPUT, message, details: { parser: err.code ?? null } },
  });
  const text =
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    `content-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${randomUUID()}\r\n` +
    `connection: close\r\n\r\n${body}`;
  return { status, text };
}

/**
 * Fastify's `clientErrorHandler`: answers {@link clientErrorAnswer} when the socket can still be
 * written to (Fastify's default answers another shape), then closes the connection.
 */
export function answerClientError(err: ParserError, socket: Socket): void {
  const answer = clientErrorAnswer(err);
  if (answer === undefined || socket.destroyed) return;
  // Destroyed once the answer is written, so a client that never reads cannot hold the socket.
  if (socket.writable) socket.end(answer.text, () => socket.destroy());
  else socket.destroy();
}
