import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usageError } from './cli-error.js';

/** The largest document the CLI downloads. */
const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
/** How long a download may take. */
const TIMEOUT_MS = 30_000;

/**
 * Downloads a document (an OpenAPI document by URL) into a temporary file named by its format
 * (`.json`, or `.yaml` for anything else), calls `use` with its path, and removes it. The CLI
 * fetches it itself, on the user's machine: the gateway fetches nothing.
 * @throws CliError naming the URL when it cannot be fetched, answers an error or is too large
 */
export async function withDownloadedDocument<T>(
  url: string,
  use: (file: string) => Promise<T>,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw usageError(`cannot fetch ${url}: ${(err as Error).message}`, err);
  }
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
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-doc-'));
  try {
    const file = join(dir, json ? 'document.json' : 'document.yaml');
    await writeFile(file, text);
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function tooLarge(url: string): Error {
  return usageError(
    `${url} is larger than ${MAX_DOCUMENT_BYTES} bytes; download it and import the file`,
  );
}
