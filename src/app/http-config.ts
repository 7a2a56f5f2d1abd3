import { ErrorCode, GatehouseError } from '../core/index.js';
import { DEFAULT_SERVER_LIMITS, DEFAULT_STREAM_LIMITS } from '../http/index.js';
import type { ServerLimits, StreamLimits } from '../http/index.js';
import { envInteger } from './env-integer.js';

/** One setting: its variable, whether 0 is allowed (it turns the limit off), and its field. */
interface Setting<T> {
  env: string;
  field: keyof T;
  zeroIsOff: boolean;
}

const SERVER: Setting<ServerLimits>[] = [
  { env: 'GATEHOUSE_REQUEST_TIMEOUT_MS', field: 'requestTimeoutMs', zeroIsOff: true },
  { env: 'GATEHOUSE_HEADERS_TIMEOUT_MS', field: 'headersTimeoutMs', zeroIsOff: true },
  { env: 'GATEHOUSE_KEEP_ALIVE_TIMEOUT_MS', field: 'keepAliveTimeoutMs', zeroIsOff: false },
  { env: 'GATEHOUSE_MAX_CONNECTIONS', field: 'maxConnections', zeroIsOff: false },
  { env: 'GATEHOUSE_MAX_REQUESTS_PER_SOCKET', field: 'maxRequestsPerSocket', zeroIsOff: true },
  { env: 'GATEHOUSE_MAX_JSON_DEPTH', field: 'maxJsonDepth', zeroIsOff: false },
  { env: 'GATEHOUSE_SEND_TIMEOUT_MS', field: 'sendTimeoutMs', zeroIsOff: true },
];

const STREAM: Setting<StreamLimits>[] = [
  { env: 'GATEHOUSE_STREAM_MAX_CLIENTS', field: 'maxClients', zeroIsOff: false },
  { env: 'GATEHOUSE_STREAM_MAX_PER_TENANT', field: 'maxClientsPerTenant', zeroIsOff: false },
  { env: 'GATEHOUSE_STREAM_MAX_PER_PRINCIPAL', field: 'maxClientsPerPrincipal', zeroIsOff: false },
  { env: 'GATEHOUSE_STREAM_BUFFER_BYTES', field: 'bufferBytes', zeroIsOff: false },
  { env: 'GATEHOUSE_STREAM_HEARTBEAT_MS', field: 'heartbeatMs', zeroIsOff: false },
  { env: 'GATEHOUSE_STREAM_STALL_MS', field: 'stallMs', zeroIsOff: false },
];

/**
 * The HTTP server's limits: `flags` (from `gatehouse serve`), then `GATEHOUSE_*` variables, then
 * {@link DEFAULT_SERVER_LIMITS}. @throws GatehouseError INVALID_INPUT naming a bad setting.
 */
export function loadServerLimits(
  flags: Partial<ServerLimits>,
  env: NodeJS.ProcessEnv,
): ServerLimits {
  return load(DEFAULT_SERVER_LIMITS, SERVER, flags, env);
}

/** The event stream's limits, read the same way over {@link DEFAULT_STREAM_LIMITS}. */
export function loadStreamLimits(
  flags: Partial<StreamLimits>,
  env: NodeJS.ProcessEnv,
): StreamLimits {
  return load(DEFAULT_STREAM_LIMITS, STREAM, flags, env);
}

function load<T extends object>(
  defaults: T,
  settings: Setting<T>[],
  flags: Partial<T>,
  env: NodeJS.ProcessEnv,
): T {
  const out = { ...defaults };
  for (const s of settings) {
    const raw = env[s.env];
    const flag = flags[s.field] as number | undefined;
    const value = flag ?? envInteger(raw, s.env);
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0 || (value === 0 && !s.zeroIsOff)) {
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `${s.env} (${String(s.field)}) must be ${s.zeroIsOff ? 'a non-negative integer (0 turns it off)' : 'a positive integer'}; got ${value}.`,
      );
    }
    (out as Record<string, unknown>)[s.field as string] = value;
  }
  return out;
}
