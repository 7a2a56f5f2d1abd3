import { dereference, parse } from '@readme/openapi-parser';
import { ErrorCode, GatehouseError } from '../../core/index.js';
import { usedPart } from './openapi-used-part.js';

/** The parser's options: references inside the document only, and no cycle of objects. */
const OPTIONS = {
  resolve: { external: false },
  dereference: { circular: 'ignore' },
  timeoutMs: 10_000,
} as const;

/**
 * An OpenAPI document (a parsed object, or the path of a JSON or YAML file) with its `$ref`s
 * inside the document resolved, by `@readme/openapi-parser`. References to other files or URLs are
 * not followed, and a reference that would close a circle stays `$ref` too (the result holds no
 * cycle of objects): the import refuses the operations that use either, naming the reference
 * (importOpenApi()). With `select` (operationIds), only what those operations use is resolved
 * (usedPart()): a component or an operation nothing selected uses, broken or circular, stops
 * nothing. Nothing is fetched and nothing outside the document is read.
 *
 * @throws GatehouseError `INVALID_INPUT` when the document cannot be read or resolved, with the
 *   parser's explanation
 */
export async function dereferenceOpenApi(
  source: string | object,
  select?: readonly string[],
): Promise<unknown> {
  let asObject = typeof source !== 'string';
  try {
    type Api = Parameters<typeof dereference>[0];
    // The parser resolves in place: work on a copy so the caller's object stays as it was.
    let api = (typeof source === 'string' ? source : structuredClone(source)) as Api | string;
    if (select !== undefined) {
      const parsed = typeof api === 'string' ? await parse(api, OPTIONS) : api;
      const part = usedPart(parsed, select);
      if (part !== null) {
        // Its objects are the parsed document's (a copy already): resolving it in place is safe.
        api = part as Api;
        asObject = true;
      }
    }
    return await dereference(api, OPTIONS);
  } catch (e) {
    let message = e instanceof Error ? e.message : String(e);
    // The parser places a document given as an object at the working directory and names
    // references by it (`/srv/gatehouse/#/components/…`): a caller learns nothing by it but where
    // the gateway runs, so the reference is named from the document's root (`#/components/…`).
    if (asObject) message = message.split(`${process.cwd()}/#`).join('#');
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `OpenAPI import: the document cannot be resolved: ${message}`,
    );
  }
}
