import { credentialNeedsSchema } from '../secrets/index.js';

/** JSON Schemas of the release events Gatehouse consumes (DESIGN §2). */

const semver =
  '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$';
const toolId = '^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*$';

/** What a tool id looks like: lower-case segments joined by `/` (`demo/echo`). */
export const TOOL_ID_PATTERN = toolId;
/** What a tool version looks like: semantic versioning (`1.0.0`, `2.1.0-rc.1`). */
export const TOOL_VERSION_PATTERN = semver;
const sideEffectClass = { enum: ['read', 'workspace-write', 'shared-write', 'production'] };

/** The envelope every release event shares. */
export const eventEnvelopeSchema = {
  type: 'object',
  required: ['id', 'type', 'data'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 200 },
    type: {
      enum: [
        'AssetReleasePublished',
        'AssetReleaseDeprecated',
        'AssetReleaseRevoked',
        'AgentReleasePublished',
      ],
    },
    tenant: { type: 'string', minLength: 1 },
    sequence: { type: 'integer', minimum: 0 },
    occurredAt: { type: 'string', format: 'date-time' },
    data: { type: 'object' },
  },
} as const;

/** A descriptor as published (DESIGN §1). */
export const descriptorSchema = {
  type: 'object',
  required: ['id', 'version', 'kind', 'description', 'inputSchema', 'sideEffect', 'execution'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: toolId, maxLength: 200 },
    version: { type: 'string', pattern: semver },
    kind: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string', minLength: 1 },
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
    sideEffect: {
      type: 'object',
      required: ['class'],
      additionalProperties: false,
      properties: {
        class: { type: 'string' },
        rules: {
          type: 'array',
          items: {
            type: 'object',
            required: ['pointer', 'raiseTo'],
            additionalProperties: false,
            properties: {
              pointer: { type: 'string', pattern: '^(/.*)?$' },
              equals: true,
              in: { type: 'array' },
              matches: { type: 'string' },
              raiseTo: sideEffectClass,
              reason: { type: 'string' },
            },
            oneOf: [{ required: ['equals'] }, { required: ['in'] }, { required: ['matches'] }],
          },
        },
      },
    },
    execution: { type: 'object' },
    timeoutMs: { type: 'integer', minimum: 1, maximum: 3_600_000 },
    sandbox: {
      type: 'object',
      additionalProperties: false,
      properties: {
        pool: { type: 'string' },
        cpus: { type: 'number', exclusiveMinimum: 0, maximum: 64 },
        memoryMb: { type: 'integer', minimum: 16, maximum: 262144 },
        gpus: { type: 'integer', minimum: 0, maximum: 16 },
        pids: { type: 'integer', minimum: 4, maximum: 65536 },
        egress: {
          type: 'array',
          items: { type: 'string', minLength: 1, maxLength: 260 },
          maxItems: 64,
        },
        readOnlyMounts: {
          type: 'array',
          items: {
            type: 'object',
            required: ['host', 'sandbox'],
            additionalProperties: false,
            properties: {
              host: { type: 'string', pattern: '^/' },
              sandbox: { type: 'string', pattern: '^/' },
            },
          },
        },
        worktree: {
          type: 'object',
          required: ['repository', 'ref'],
          additionalProperties: false,
          properties: {
            repository: { type: 'string', minLength: 1 },
            ref: { type: 'string', minLength: 1 },
          },
        },
      },
    },
    credentials: credentialNeedsSchema,
  },
} as const;

export const assetReleasePublishedSchema = {
  type: 'object',
  required: ['assetId', 'version', 'descriptor'],
  additionalProperties: false,
  properties: {
    assetId: { type: 'string', pattern: toolId },
    version: { type: 'string', pattern: semver },
    descriptor: { type: 'object' },
    inFlightPolicy: { enum: ['finish', 'abort'] },
  },
} as const;

export const assetReleaseDeprecatedSchema = {
  type: 'object',
  required: ['assetId', 'version'],
  additionalProperties: false,
  properties: {
    assetId: { type: 'string', pattern: toolId },
    version: { type: 'string', pattern: semver },
    reason: { type: 'string' },
  },
} as const;

export const assetReleaseRevokedSchema = {
  type: 'object',
  required: ['assetId', 'version', 'reason'],
  additionalProperties: false,
  properties: {
    assetId: { type: 'string', pattern: toolId },
    version: { type: 'string', pattern: semver },
    reason: { type: 'string', minLength: 1 },
  },
} as const;

export const agentReleasePublishedSchema = {
  type: 'object',
  required: ['agentId', 'version', 'closure', 'policy'],
  additionalProperties: false,
  properties: {
    agentId: { type: 'string', pattern: toolId },
    version: { type: 'string', pattern: semver },
    closure: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'version'],
        additionalProperties: false,
        properties: { id: { type: 'string' }, version: { type: 'string', pattern: semver } },
      },
    },
    policy: {
      type: 'object',
      required: ['maxClass'],
      additionalProperties: false,
      properties: { maxClass: sideEffectClass },
    },
    mcp: {
      type: 'object',
      required: ['toolNames'],
      additionalProperties: false,
      properties: { toolNames: { enum: ['versioned', 'upstream'] } },
    },
  },
} as const;
