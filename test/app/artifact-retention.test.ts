import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  await g?.close();
  g = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe('artifact retention', () => {
  it('removes artifacts older than the retention with the sandbox turned off, and keeps newer ones', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-retention-'));
    const shard = join(dataDir, 'artifacts', 'ab');
    mkdirSync(shard, { recursive: true });
    const old = join(shard, 'ab'.padEnd(64, '0'));
    const fresh = join(shard, 'ab'.padEnd(64, '1'));
    writeFileSync(old, 'old output');
    writeFileSync(fresh, 'fresh output');
    const twoDaysAgo = (Date.now() - 2 * 24 * 3600 * 1000) / 1000;
    utimesSync(old, twoDaysAgo, twoDaysAgo);

    g = await startDemoGateway({
      dataDir,
      config: { artifactRetentionMs: 24 * 3600 * 1000 },
      sandbox: { enabled: false },
    });
    expect(g.gateway.execution.sandboxProblem).toMatch(/turned off/);
    await expect.poll(() => existsSync(old), { timeout: 10_000 }).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });
});
