import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EgressResolver } from '../egress/index.js';
import { CliError, usageError } from './cli-error.js';

/** The largest document the CLI downloads. */
const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
/** How long a download may take. */
const TIMEOUT_MS = 30_000;
/** Redirects a download follows, each judged as the first URL was. */
const MAX_REDIRECTS = 5;

/** Options of {@link withDownloadedDocument}. */
export interface DownloadOptions {
  /** Allow private and loopback addresses (`--allow-private-address`); link-local never. */
  allowPrivate?: boolean;
  /** DNS lookup (tests); by default the system's. */
  resolve?: EgressResolver;
}

/**
 * Downloads a document (an OpenAPI document by URL) into a temporary file named by its format
 * (`.json`, or `.yaml` for anything else), calls `use` with its path, and removes it. The CLI
 * fetches it itself, on the user's machine: the gateway fetches nothing. Before any connection the
 * URL's host is resolved once and judged (public addresses only unless `allowPrivate`; link-local
 * and cloud metadata never), the connection goes to the judged addresses only, and every redirect
 * is judged again the same way — a document URL cannot be used to read the metadata service or
 * another host on the user's network.
 * @throws CliError naming the URL when it is refused, cannot be fetched, answers an error or is too large
 */
export async function withDownloadedDocument<T>(
  url: string,
  use: (file: string) => Promise<T>,
  options: DownloadOptions = {},
): Promise<T> {
  const { authorizeDocumentFetch, pinnedFetch } = await import('../egress/index.js');
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  let at: URL;
  try {
    at = new URL(url);
  } catch {
    throw usageError(`${url} is not a URL`);
  }
  let document: { text: string; json: boolean } | undefined;
  for (let redirects = 0; ; redirects++) {
    const decision = await authorizeDocumentFetch(at, {
      ...(options.allowPrivate === undefined ? {} : { allowPrivate: options.allowPrivate }),
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
    });
    const hop = redirects === 0 ? '' : ` (redirected to ${at.href})`;
    if (!decision.allowed) throw usageError(`refused to fetch ${url}${hop}: ${decision.reason}`);
    const pinned = pinnedFetch({ origin: at, addresses: decision.addresses });
    let location: string | null;
    try {
      const res = await pinned.fetch(at, { signal, redirect: 'manual' });
      location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
      if (location === null) document = await bodyOf(url, res);
      else await res.body?.cancel().catch(() => undefined);
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw usageError(`cannot fetch ${url}${hop}: ${(err as Error).message}`, err);
    } finally {
      pinned.close();
    }
    if (location === null) break;
    if (redirects >= MAX_REDIRECTS)
      throw usageError(`${url} redirects more than ${MAX_REDIRECTS} times`);
    try {
      at = new URL(location, at);
    } catch {
      throw usageError(`${url} redirects to an unusable location`);
    }
  }
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-doc-'));
  try {
    const file = join(dir, document!.json ? 'document.json' : 'document.yaml');
    await writeFile(file, document!.text);
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The answer's body as text, bounded, and whether it is JSON (else YAML is assumed). */
async function bodyOf(url: string, res: Response): Promise<{ text: string; json: boolean }> {
  if (!res.ok) throw usageError(`cannot fetch ${url}: it answered ${res.status} ${res.statusText}`);
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_DOCUMENT_BYTES) throw tooLarge(url);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > MAX_DOCUMENT_BYTES) throw tooLarge(url);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const json = /json/i.test(res.headers.get('content-type') ?? '') || /^\s*[{[]/.test(text);
  return { text, json };
}

function tooLarge(url: string): Error {
  return usageError(
    `${url} is larger than ${MAX_DOCUMENT_BYTES} bytes; download it and import the file`,
  );
}
