import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactStore, ArtifactWriter } from '../audit/index.js';

/** {@link ArtifactStore} as files named by their SHA-256 under a directory, written atomically. */
export class FileArtifactStore implements ArtifactStore {
  private tempFiles = 0;
  /** The directory is made by the first writer (not per writer: a sync call on the event loop). */
  private dirMade = false;

  constructor(private readonly dir: string) {}

  private path(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const target = this.path(sha256);
    await mkdir(join(this.dir, sha256.slice(0, 2)), { recursive: true });
    const tmp = this.tmpPath();
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, target);
    return sha256;
  }

  writer(): ArtifactWriter {
    if (!this.dirMade) {
      mkdirSync(this.dir, { recursive: true });
      this.dirMade = true;
    }
    const tmp = this.tmpPath();
    const fd = openSync(tmp, 'w', 0o600);
    const hash = createHash('sha256');
    let open = true;
    const close = () => {
      if (open) closeSync(fd);
      open = false;
    };
    return {
      write: (bytes) => {
        hash.update(bytes);
        writeSync(fd, bytes);
      },
      finish: async () => {
        close();
        const sha256 = hash.digest('hex');
        await mkdir(join(this.dir, sha256.slice(0, 2)), { recursive: true });
        await rename(tmp, this.path(sha256));
        return sha256;
      },
      abort: async () => {
        close();
        await rm(tmp, { force: true });
      },
    };
  }

  async get(sha256: string): Promise<Buffer | undefined> {
    if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined;
    try {
      return await readFile(this.path(sha256));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /**
   * Removes artifacts (and abandoned temporary files) last written before `cutoffMs` (epoch ms):
   * the retention sweep. A removed artifact's digest stays in its record; fetching it then answers
   * not found. Safe to repeat. @returns how many files were removed.
   */
  async removeOlderThan(cutoffMs: number): Promise<number> {
    let removed = 0;
    const sweep = async (dir: string, depth: number): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const path = join(dir, e.name);
        if (e.isDirectory() && depth === 0 && /^[0-9a-f]{2}$/.test(e.name)) {
          await sweep(path, 1);
          continue;
        }
        if (!e.isFile()) continue;
        const written = await stat(path).then(
          (s) => s.mtimeMs,
          () => Number.POSITIVE_INFINITY,
        );
        if (written >= cutoffMs) continue;
        await rm(path, { force: true });
        removed += 1;
      }
    };
    await sweep(this.dir, 0);
    return removed;
  }

  private tmpPath(): string {
    this.tempFiles += 1;
    return join(this.dir, `.tmp-${process.pid}-${Date.now()}-${this.tempFiles}`);
  }
}
