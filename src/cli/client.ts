/** A failed API call: the gateway's error body, or why it could not be reached. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** A minimal REST client for the CLI; reads `GATEHOUSE_URL` and `GATEHOUSE_TOKEN`. */
export class GatehouseClient {
  constructor(
    readonly baseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:7070',
    private readonly token = process.env.GATEHOUSE_TOKEN,
  ) {}

  /**
   * Sends one request; resolves with status and parsed body for 2xx, and for 4xx answers whose
   * body is an invocation record (denials carry the record). @throws ApiError otherwise.
   */
  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown }> {
    const h: Record<string, string> = { ...headers };
    if (this.token) h.authorization = `Bearer ${this.token}`;
    if (body !== undefined) h['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: h,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (err) {
      throw new ApiError(
        0,
        'UNREACHABLE',
        `cannot reach Gatehouse at ${this.baseUrl} (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}); is it running? Set GATEHOUSE_URL.`,
      );
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    const isRecord =
      typeof parsed === 'object' && parsed !== null && 'status' in parsed && 'id' in parsed;
    if (!res.ok && error && !isRecord)
      throw new ApiError(res.status, error.code ?? 'ERROR', error.message ?? text, parsed);
    if (!res.ok && !isRecord) {
      throw new ApiError(
        res.status,
        'HTTP_' + res.status,
        typeof parsed === 'string' ? parsed : JSON.stringify(parsed),
      );
    }
    return { status: res.status, body: parsed };
  }
}
