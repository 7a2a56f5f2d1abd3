import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, GatehouseError } from '../core/index.js';
import { writeFileAtomic } from '../audit/index.js';
import type { NodeStore } from '../capacity/index.js';

/** The file of a data directory that keeps its node id across restarts. */
const NODE_ID_FILE = 'node-id';
const NODE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The node id of the gateway on `dataDir`: read from `DATA/node-id`, or made (`node-` and 12
 * random hex digits) and written there the first time, so a restart finds the calls it left.
 * @throws GatehouseError INVALID_INPUT when the file holds something else than an id.
 */
export async function nodeIdOf(dataDir: string): Promise<string> {
  const file = join(dataDir, NODE_ID_FILE);
  if (existsSync(file)) {
    const id = (await readFile(file, 'utf8')).trim();
    if (!NODE_ID.test(id))
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `${file} must hold a node id (1–64 letters, digits, '.', '_' or '-'); remove it to have a new one made.`,
      );
    return id;
  }
  const id = `node-${randomBytes(6).toString('hex')}`;
  await writeFileAtomic(file, `${id}\n`, 0o644);
  return id;
}

/**
 * Refuses to start a node whose id is alive on another host (a data directory copied from a
 * running node): the two would take each other's calls for their own. The same host cannot run
 * two (the data directory lock), so a live entry of this host is this node's previous run.
 * @throws GatehouseError CONFLICT naming the other host.
 */
export async function checkNodeId(
  store: NodeStore,
  id: string,
  now: number,
  graceMs: number,
): Promise<void> {
  const stored = await store.get(id);
  if (
    stored?.status === 'alive' &&
    stored.host !== hostname() &&
    Date.parse(stored.heartbeatAt) > now - graceMs
  )
    throw new GatehouseError(
      ErrorCode.CONFLICT,
      `Node id ${id} is in use by a gateway on host ${stored.host} (pid ${stored.pid}, last heartbeat ${stored.heartbeatAt}); was this data directory copied from it? Remove its node-id file to start as a new node.`,
      { details: { node: id, host: stored.host, pid: stored.pid } },
    );
}
