import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { api, spawnServer, useServers } from '../helpers/cli.js';

const { start, tempDir } = useServers();

/** Start-up may be slow on a loaded machine; the test is about the lock, not the time. */
const START_MS = 90_000;

describe('one data directory, one gateway', () => {
  it('refuses a second gateway on the same data directory, naming the holder, and takes over the lock of a killed one', async () => {
    const dir = tempDir('gatehouse-lock-');
    const first = await start(dir, START_MS);

    const second = spawnServer(dir, START_MS);
    const refused = await second.then(
      () => 'started',
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/exited \(1\) before listening/);
    expect(refused).toContain(
      `in use by another Gatehouse (pid ${first.pid} on host ${hostname()}, started at 20`,
    );
    // The first is untouched: still serving, still ready.
    expect((await api(first.url, 'GET', '/readyz')).status).toBe(200);

    // A lock left by a process killed with SIGKILL is no lock: the next gateway starts.
    await first.kill('SIGKILL');
    const third = await start(dir, START_MS);
    expect((await api(third.url, 'GET', '/readyz')).status).toBe(200);
    const fourth = await spawnServer(dir, START_MS).then(
      () => 'started',
      (err: Error) => err.message,
    );
    expect(fourth).toContain(`pid ${third.pid} on host ${hostname()}`);
  }, 400_000);
});
