import type { IncomingMessage, RequestOptions, request as httpRequest } from 'node:http';
import { usageError } from './cli-error.js';

/** A failed API call: the gateway's error body, or why it could not be reached (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** What the gateway answered: its HTTP status and the parsed body. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** A minimal REST client for the CLI; reads `GATEHOUSE_URL` and `GATEHOUSE_TOKEN`. */
export class GatehouseClient {
  constructor(
    readonly baseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:7070',
    private readonly token = process.env.GATEHOUSE_TOKEN,
  ) {}

  /**
   * Sends one request; resolves with status and parsed body for 2xx, and for 4xx answers whose
   * body is an invocation record (denials carry the record). @throws ApiError otherwise: the
   * gateway's `{error: {code, message, details}}`, or status 0 `UNREACHABLE`.
   */
  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer> {
    const h: Record<string, string> = { ...headers };
    if (this.token) h.authorization = `Bearer ${this.token}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) {
      h['content-type'] = 'application/json';
      h['content-length'] = String(Buffer.byteLength(payload));
    }
    let url: URL;
    try {
      url = new URL(path, this.baseUrl);
    } catch (err) {
      throw usageError(`GATEHOUSE_URL ${JSON.stringify(this.baseUrl)} is not a URL`, err);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw usageError(`${url.href} is not an http or https URL`);
    let res: { status: number; statusText: string; text: string };
    try {
      res = await send(url, method, h, payload);
    } catch (err) {
      throw new ApiError(
        0,
        'UNREACHABLE',
        `cannot reach Gatehouse at ${this.baseUrl} (${(err as Error).message}); is it running? Set GATEHOUSE_URL.`,
      );
    }
    const ok = res.status >= 200 && res.status < 300;
    const text = res.text;
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    if (ok || isInvocationRecord(parsed)) return { status: res.status, body: parsed };
    const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } })
      ?.error;
    if (typeof error === 'object' && error !== null) {
      throw new ApiError(
        res.status,
        typeof error.code === 'string' ? error.code : `HTTP_${res.status}`,
        typeof error.message === 'string' ? error.message : text,
        typeof error.details === 'object' && error.details !== null
          ? (error.details as Record<string, unknown>)
          : {},
        parsed,
      );
    }
    throw new ApiError(
      res.status,
      `HTTP_${res.status}`,
      (typeof parsed === 'string' ? parsed : JSON.stringify(parsed)) || res.statusText,
      {},
      parsed,
    );
  }
}

/** An invocation record, as `POST /v1/invocations` answers even when it refuses (403, 422). */
function isInvocationRecord(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    'status' in body &&
    'id' in body &&
    'requestHash' in body
  );
}

/**
 * One HTTP exchange with node:http or node:https, loaded when the first request is sent (so
 * `--version` and `--help` never load them). Not `fetch`: loading its implementation costs a
 * client command more than everything else it does.
 */
async function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  payload: string | undefined,
): Promise<{ status: number; statusText: string; text: string }> {
  const request: (
    url: URL,
    options: RequestOptions,
    callback: (res: IncomingMessage) => void,
  ) => ReturnType<typeof httpRequest> =
    url.protocol === 'https:'
      ? (await import('node:https')).request
      : (await import('node:http')).request;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}
