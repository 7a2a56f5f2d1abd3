import { ErrorCode, GatehouseError } from '../../core/index.js';
import { dereferenceOpenApi, importEvents, importOpenApi } from '../../executors/index.js';
import { objectBody, optionalString, stringField } from '../request-parsing.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/** At most this many operations are imported by one request. */
const MAX_SELECT = 200;

function invalid(pointer: string, message: string): GatehouseError {
  return new GatehouseError(ErrorCode.INVALID_INPUT, `${pointer} ${message}`, {
    details: { pointer },
  });
}

/** `select`: a non-empty list of operationIds, bounded. */
function selectOf(body: Record<string, unknown>): string[] {
  const v = body.select;
  if (
    !Array.isArray(v) ||
    v.length === 0 ||
    v.length > MAX_SELECT ||
    !v.every((s) => typeof s === 'string' && s !== '')
  )
    throw invalid('/select', `must be a list of 1 to ${MAX_SELECT} operationIds (strings)`);
  return v as string[];
}

/** `classes`: operationId → class, or nothing. */
function classesOf(body: Record<string, unknown>): Record<string, string> | undefined {
  const v = body.classes;
  if (v === undefined || v === null) return undefined;
  if (
    typeof v !== 'object' ||
    Array.isArray(v) ||
    !Object.values(v).every((c) => typeof c === 'string')
  )
    throw invalid('/classes', 'must map operationIds to classes, e.g. {"deletePet": "production"}');
  return v as Record<string, string>;
}

/** An OpenAPI document in, http descriptors out (and published unless it is a dry run). */
export function openApiImportRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'POST',
      url: '/v1/tools/import-openapi',
      tag: 'registry',
      summary:
        'Make http descriptors from operations of an OpenAPI 3.0/3.1 document and publish them (AssetReleasePublished), or only return them with dryRun',
      body: {
        type: 'object',
        required: ['document', 'idPrefix', 'version', 'select'],
        properties: {
          document: { type: 'object' },
          idPrefix: { type: 'string' },
          version: { type: 'string' },
          select: { type: 'array', items: { type: 'string' } },
          classes: { type: 'object', additionalProperties: { type: 'string' } },
          baseUrl: { type: 'string' },
          dryRun: { type: 'boolean' },
        },
      },
      responses: {
        '200': '{descriptors, warnings, results?: [{id, type, result, message}]}',
        '400': 'invalid document or options (unknown operationIds are named, with those there are)',
        '409': 'conflict',
        '422': 'a descriptor publication refuses',
      },
      handler: async (principal, req) => {
        const body = objectBody(req.body, 'POST /v1/tools/import-openapi');
        const document = body.document;
        if (typeof document !== 'object' || document === null || Array.isArray(document))
          throw invalid('/document', 'must be the OpenAPI document as a JSON object');
        const baseUrl = optionalString(body, 'baseUrl', 2048);
        const classes = classesOf(body);
        const options = {
          idPrefix: stringField(body, 'idPrefix'),
          version: stringField(body, 'version'),
          select: selectOf(body),
          ...(classes === undefined ? {} : { classes }),
          ...(baseUrl === undefined ? {} : { baseUrl }),
        };
        if (body.dryRun !== undefined && typeof body.dryRun !== 'boolean')
          throw invalid('/dryRun', 'must be true or false');
        // Only references inside the document are resolved: nothing is fetched or read.
        const { descriptors, warnings } = importOpenApi(
          await dereferenceOpenApi(document, options.select),
          options,
        );
        if (body.dryRun === true) return { status: 200, body: { descriptors, warnings } };
        const results = await s.registry.applyEvents(
          principal.tenant,
          importEvents(descriptors),
          principal.id,
        );
        return { status: 200, body: { descriptors, warnings, results } };
      },
    },
  ];
}
