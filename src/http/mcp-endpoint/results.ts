import type { CallToolResult } from '@modelcontextprotocol/server';
import type { GatehouseError } from '../../core/index.js';
import { ErrorCode } from '../../core/index.js';
import type { InvocationRecord } from '../../invocation/index.js';

/** Keys Gatehouse reads from and writes to an MCP request's or result's `_meta`. */
export const MetaKey = {
  environment: 'gatehouse/environment',
  idempotencyKey: 'gatehouse/idempotencyKey',
  idempotencyKeyDerived: 'gatehouse/idempotencyKeyDerived',
  approvalId: 'gatehouse/approvalId',
  invocationId: 'gatehouse/invocationId',
  requestHash: 'gatehouse/requestHash',
  status: 'gatehouse/status',
  provenance: 'gatehouse/provenance',
  error: 'gatehouse/error',
  truncated: 'gatehouse/truncated',
} as const;
export type MetaKey = (typeof MetaKey)[keyof typeof MetaKey];

/**
 * An invocation record as a `tools/call` result. An observed answer in MCP content blocks (an
 * upstream tool's) keeps its blocks; any other output is its JSON as text and as structured
 * content. Governance outcomes are results, not protocol errors: waiting for approval is a normal result that says how to proceed; a denial, a failure
 * or an Uncertain effect is an `isError` result with its code and message.
 */
export function recordResult(
  record: InvocationRecord,
  extraMeta: Record<string, unknown>,
): CallToolResult {
  const meta: Record<string, unknown> = {
    ...extraMeta,
    [MetaKey.invocationId]: record.id,
    [MetaKey.requestHash]: record.requestHash,
    [MetaKey.status]: record.status,
    [MetaKey.provenance]: record.provenance ?? {
      tool: record.tool.id,
      version: record.tool.version,
      invocation: record.id,
      untrusted: true,
    },
  };
  if (record.approvalId !== null) meta[MetaKey.approvalId] = record.approvalId;
  switch (record.status) {
    case 'observed': {
      const output = record.output;
      const upstream = toolResultOf(output);
      if (upstream) {
        // An MCP tool's answer (sanitized) in its own content blocks, images and all.
        if (upstream.truncated !== undefined) meta[MetaKey.truncated] = upstream.truncated;
        return {
          content: upstream.content,
          ...(upstream.structuredContent ? { structuredContent: upstream.structuredContent } : {}),
          ...(upstream.isError ? { isError: true } : {}),
          _meta: meta,
        };
      }
      const structured =
        typeof output === 'object' && output !== null && !Array.isArray(output)
          ? { structuredContent: output as Record<string, unknown> }
          : {};
      return {
        content: [{ type: 'text', text: JSON.stringify(output ?? null) }],
        ...structured,
        _meta: meta,
      };
    }
    case 'awaiting_approval':
      return {
        content: [
          {
            type: 'text',
            text: `awaiting_approval: invocation ${record.id} (request hash ${record.requestHash}) needs a reviewer's approval ${record.approvalId ?? ''}. Once it is approved, repeat the same call with _meta {"${MetaKey.approvalId}": "${record.approvalId ?? ''}"} to proceed.`,
          },
        ],
        _meta: meta,
      };
    case 'queued':
    case 'running':
      return {
        content: [
          {
            type: 'text',
            text: `${record.status}: invocation ${record.id} has not finished; repeat the same call to read its outcome.`,
          },
        ],
        _meta: meta,
      };
    case 'denied':
    case 'failed':
    case 'uncertain': {
      const code =
        record.status === 'uncertain'
          ? ErrorCode.EFFECT_UNCERTAIN
          : (record.error?.code ?? ErrorCode.INTERNAL);
      const message = record.error?.message ?? `the invocation ended ${record.status}`;
      meta[MetaKey.error] = {
        code,
        message,
        ...(record.error?.stage ? { stage: record.error.stage } : {}),
      };
      return {
        content: [{ type: 'text', text: `${record.status} ${code}: ${message}` }],
        isError: true,
        _meta: meta,
      };
    }
  }
}

const BLOCK_TYPES = new Set(['text', 'image', 'audio', 'resource', 'resource_link']);

/**
 * The output of a tool that answers in MCP content blocks (an `mcp` tool's recorded output:
 * `{content, structuredContent?, isError?, truncated?}`), or null for any other output.
 */
function toolResultOf(output: unknown): {
  content: CallToolResult['content'];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  truncated?: unknown;
} | null {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return null;
  const o = output as Record<string, unknown>;
  const content = o.content;
  if (!Array.isArray(content) || content.length === 0) return null;
  const blocks = content.every(
    (c) =>
      typeof c === 'object' &&
      c !== null &&
      BLOCK_TYPES.has(String((c as { type?: unknown }).type)),
  );
  if (!blocks) return null;
  const structured = o.structuredContent;
  return {
    content: content as CallToolResult['content'],
    ...(typeof structured === 'object' && structured !== null && !Array.isArray(structured)
      ? { structuredContent: structured as Record<string, unknown> }
      : {}),
    ...(o.isError === true ? { isError: true } : {}),
    ...(o.truncated !== undefined ? { truncated: o.truncated } : {}),
  };
}

/** A refused request (a GatehouseError) as an `isError` result carrying its code and details. */
export function refusalResult(
  err: GatehouseError,
  extraMeta: Record<string, unknown>,
): CallToolResult {
  return {
    content: [{ type: 'text', text: `${err.code}: ${err.message}` }],
    isError: true,
    _meta: {
      ...extraMeta,
      [MetaKey.error]: { code: err.code, message: err.message, details: err.details },
    },
  };
}
