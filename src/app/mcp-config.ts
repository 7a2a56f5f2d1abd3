import { ErrorCode, GatehouseError } from '../core/index.js';
import { DEFAULT_MCP_STREAM_LIMITS } from '../tenancy/index.js';
import type { McpStreamLimits } from '../tenancy/index.js';
import { DEFAULT_FORWARDING } from '../executors/index.js';
import type { ForwardingBounds } from '../executors/index.js';
import { envInteger } from './env-integer.js';

/** The bounds of forwarded sampling and elicitation that are settings (the trace's are not). */
export type McpForwardingConfig = Pick<ForwardingBounds, 'maxBytes' | 'maxPerCall' | 'timeoutMs'>;

/** What `/mcp` and the upstream connections are configured with beyond the reach settings. */
export interface McpConfig {
  forwarding: McpForwardingConfig;
  /** What each session keeps of its streams for `Last-Event-ID` replay. */
  streams: McpStreamLimits;
  /**
   * Largest single message taken from an upstream (a stdio line, an HTTP answer or one event of
   * its stream): the SDK holds a whole message in memory, so this bounds what one upstream costs.
   */
  maxMessageBytes: number;
}

/** The setting of {@link McpConfig.maxMessageBytes}, named in the error of a message over it. */
export const MAX_MESSAGE_BYTES_SETTING = 'GATEHOUSE_MCP_MAX_MESSAGE_BYTES';

/** The default of {@link McpConfig.maxMessageBytes}: room for a 4 MiB answer. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The MCP settings: `flags`, then `GATEHOUSE_MCP_*` variables, then the defaults. Each is a
 * positive integer. @throws GatehouseError INVALID_INPUT naming a bad setting.
 */
export function loadMcpConfig(
  flags: {
    forwarding?: Partial<McpForwardingConfig>;
    streams?: Partial<McpStreamLimits>;
    maxMessageBytes?: number;
  },
  env: NodeJS.ProcessEnv,
): McpConfig {
  const read = (flag: number | undefined, name: string, fallback: number): number => {
    const value = flag ?? envInteger(env[name], name, 'a positive integer');
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new GatehouseError(
        ErrorCode.INVALID_INPUT,
        `${name} must be a positive integer; got ${value}.`,
      );
    return value;
  };
  const f = flags.forwarding ?? {};
  const s = flags.streams ?? {};
  const d = DEFAULT_FORWARDING;
  const ds = DEFAULT_MCP_STREAM_LIMITS;
  return {
    forwarding: {
      maxBytes: read(f.maxBytes, 'GATEHOUSE_MCP_FORWARD_MAX_BYTES', d.maxBytes),
      maxPerCall: read(f.maxPerCall, 'GATEHOUSE_MCP_FORWARD_MAX_PER_CALL', d.maxPerCall),
      timeoutMs: read(f.timeoutMs, 'GATEHOUSE_MCP_FORWARD_TIMEOUT_MS', d.timeoutMs),
    },
    streams: {
      events: read(s.events, 'GATEHOUSE_MCP_STREAM_EVENTS', ds.events),
      bytes: read(s.bytes, 'GATEHOUSE_MCP_STREAM_BYTES', ds.bytes),
      ttlMs: read(s.ttlMs, 'GATEHOUSE_MCP_STREAM_TTL_MS', ds.ttlMs),
    },
    maxMessageBytes: read(
      flags.maxMessageBytes,
      MAX_MESSAGE_BYTES_SETTING,
      DEFAULT_MAX_MESSAGE_BYTES,
    ),
  };
}
