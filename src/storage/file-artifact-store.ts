import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactStore } from '../audit/index.js';

/** {@link ArtifactStore} as files named by their SHA-256 under a directory, written atomically. */
export class FileArtifactStore implements ArtifactStore {
  constructor(private readonly dir: string) {}

  private path(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const target = this.path(sha256);
    await mkdir(join(this.dir, sha256.slice(0, 2)), { recursive: true });
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, target);
    return sha256;
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
}
