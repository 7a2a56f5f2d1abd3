import { readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';

/** One built file of the Studio, held in memory. */
export interface StudioFile {
  body: Buffer;
  contentType: string;
  /** Hashed names under `assets/` never change: they are cached for a year. */
  immutable: boolean;
}

/** The Studio's built files by path relative to its folder (`index.html`, `assets/…`). */
export type StudioFiles = ReadonlyMap<string, StudioFile>;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Most bytes read from the Studio's folder: a guard against pointing it at the wrong place. */
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;

/**
 * Reads the built Studio (`npm run build` writes it to `dist/studio/`) into memory, so serving it
 * touches no file system and no request can name a path outside it. Answers null when the folder
 * holds no `index.html` (not built).
 * @throws Error when the folder holds more than 32 MiB.
 */
export function loadStudioFiles(dir: string): StudioFiles | null {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return null;
  }
  const files = new Map<string, StudioFile>();
  let total = 0;
  for (const name of names) {
    const full = join(dir, name);
    if (!statSync(full).isFile()) continue;
    const body = readFileSync(full);
    total += body.length;
    if (total > MAX_TOTAL_BYTES)
      throw new Error(`The Studio folder ${dir} holds more than 32 MiB: is it the built Studio?`);
    const path = relative(dir, full).split(sep).join('/');
    files.set(path, {
      body,
      contentType: TYPES[extname(path)] ?? 'application/octet-stream',
      immutable: path.startsWith('assets/'),
    });
  }
  return files.has('index.html') ? files : null;
}
