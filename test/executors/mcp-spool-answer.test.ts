import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spoolAnswer } from '../../src/executors/mcp/spool-answer.js';
import { OutputCapture } from '../../src/invocation/index.js';
import { FileArtifactStore } from '../../src/storage/index.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Redaction that removes nothing: the unit under test is how the answer is handed over. */
const noRedaction = { push: (s: string) => s, end: () => '', removals: () => [] };

describe('spoolAnswer', () => {
  it('keeps an answer whole in its artifact, a character cut between slices included', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-spool-'));
    const store = new FileArtifactStore(dir);
    // An emoji (two UTF-16 units) straddles the first 64 Ki-character slice's end.
    const json = JSON.stringify({ text: `${'a'.repeat(64 * 1024 - 10)}😀${'é'.repeat(70_000)}` });
    expect(json.charCodeAt(64 * 1024 - 1)).toBeGreaterThanOrEqual(0xd800);
    const whole = await spoolAnswer(json, new OutputCapture(store, noRedaction, 1024));
    expect(whole).toMatchObject({ truncated: true, bytes: Buffer.byteLength(json) });
    const artifact = (whole as { artifact: string }).artifact;
    expect((await store.get(artifact))?.toString('utf8')).toBe(json);
  });
});
