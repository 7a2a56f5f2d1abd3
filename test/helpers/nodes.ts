import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import { ensureBuilt, spawnServer } from './cli.js';
import type { ServerProcess } from './cli.js';
import { freshPostgresDatabase } from './postgres.js';

/** Gateway processes sharing one PostgreSQL database, as `gatehouse serve` runs them. */
export interface GatewayNodes {
  /** The database URL. */
  db: string;
  /** The processes, in start order. */
  nodes: ServerProcess[];
  /** Their base URLs, in the same order. */
  urls: string[];
  /** Their data directories, in the same order. */
  dirs: string[];
  /** The demo's tokens (one set, in the shared database). */
  tokens: DemoTokens;
  /** The environment every node runs with (database URL, master key, sandbox off). */
  env: NodeJS.ProcessEnv;
  /**
   * Kills node `i` with `signal` and starts it again on its data directory; `nodes[i]` and
   * `urls[i]` are then the new process's (stopped after the file's tests like the others).
   */
  restart(i: number, signal?: NodeJS.Signals): Promise<ServerProcess>;
}

/**
 * Starts `count` nodes of `gatehouse serve --demo` on a fresh database of the run's PostgreSQL
 * cluster, each with a data directory and spare port of its own and all with one master key. The
 * first node seeds the demo; the others start together once it has, with its token file (so they
 * add no principals of their own). The sandbox is off: these nodes run native tools only.
 * `extraEnv` is laid over their environment (a short heartbeat, say).
 * Call at a file's top level; `get()` answers once `beforeAll` started them. They get SIGTERM and
 * their directories are removed after the file's tests.
 */
export function useNodes(count = 3, extraEnv: NodeJS.ProcessEnv = {}): { get: () => GatewayNodes } {
  let nodes: GatewayNodes | undefined;
  const started: ServerProcess[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    ensureBuilt();
    const db = await freshPostgresDatabase('nodes');
    const env: NodeJS.ProcessEnv = {
      GATEHOUSE_DB: db,
      GATEHOUSE_MASTER_KEY: randomBytes(32).toString('base64'),
      GATEHOUSE_SANDBOX: 'off',
      ...extraEnv,
    };
    for (let i = 0; i < count; i++) dirs.push(mkdtempSync(join(tmpdir(), 'gatehouse-node-')));
    const first = await spawnServer(dirs[0]!, 60_000, env);
    started.push(first);
    const tokensFile = join(dirs[0]!, 'demo-tokens.json');
    for (const dir of dirs.slice(1)) copyFileSync(tokensFile, join(dir, 'demo-tokens.json'));
    const rest = await Promise.allSettled(
      dirs.slice(1).map((dir) => spawnServer(dir, 60_000, env)),
    );
    for (const r of rest) if (r.status === 'fulfilled') started.push(r.value);
    const failed = rest.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const urls = started.map((n) => n.url);
    nodes = {
      db,
      nodes: [...started],
      urls,
      dirs,
      tokens: JSON.parse(readFileSync(tokensFile, 'utf8')) as DemoTokens,
      env,
      async restart(i, signal = 'SIGKILL') {
        const g = nodes!;
        await g.nodes[i]!.kill(signal);
        const again = await spawnServer(dirs[i]!, 60_000, env);
        started.push(again);
        g.nodes[i] = again;
        urls[i] = again.url;
        return again;
      },
    };
  });
  afterAll(async () => {
    await Promise.all(started.splice(0).map((n) => n.kill('SIGTERM')));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    get: () => {
      if (!nodes) throw new Error('the nodes are not started (useNodes at the top level)');
      return nodes;
    },
  };
}
