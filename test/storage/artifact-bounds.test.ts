import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputCapture } from '../../src/invocation/index.js';
import { FileArtifactStore } from '../../src/storage/index.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Redaction that removes nothing: the unit under test is the spool's bound. */
const noRedaction = { push: (s: string) => s, end: () => '', removals: () => [] };

/** Every artifact file under the store's directory, with its size. */
function artifactFiles(root: string): { name: string; size: number }[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => ({ name: e.name, size: statSync(join(e.parentPath, e.name)).size }));
}

describe('artifact bounds on disk', () => {
  it('an output flood is spooled only up to the per-stream artifact bound, and says so', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-artifacts-'));
    const store = new FileArtifactStore(dir);
    const capture = new OutputCapture(store, noRedaction, 1024, 1024 * 1024);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    for (let i = 0; i < 80; i++) capture.write(chunk); // 5 MiB
    const captured = await capture.end();
    expect(captured).toMatchObject({
      bytes: 80 * 64 * 1024,
      truncated: true,
      artifactBytes: 1024 * 1024,
    });
    expect(artifactFiles(dir)).toEqual([{ name: captured.artifact, size: 1024 * 1024 }]);
  });

  it('the retention sweep removes artifacts written before the cutoff and keeps newer ones', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-artifacts-'));
    const store = new FileArtifactStore(dir);
    const old = await store.put(Buffer.from('old output'));
    const fresh = await store.put(Buffer.from('fresh output'));
    const day = 24 * 3600 * 1000;
    const oldFile = join(dir, old.slice(0, 2), old);
    utimesSync(oldFile, (Date.now() - 3 * day) / 1000, (Date.now() - 3 * day) / 1000);
    expect(await store.removeOlderThan(Date.now() - day)).toBe(1);
    expect(await store.get(old)).toBeUndefined();
    expect((await store.get(fresh))?.toString()).toBe('fresh output');
    expect(await store.removeOlderThan(Date.now() - day)).toBe(0);
  });
});
