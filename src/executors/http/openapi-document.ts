import { dereference } from '@readme/openapi-parser';
import { ErrorCode, GatehouseError } from '../../core/index.js';

/**
 * An OpenAPI document (a parsed object, or the path of a JSON or YAML file) with its `$ref`s
 * inside the document resolved, by `@readme/openapi-parser`. References to other files or URLs are
 * not followed, and a reference that would close a circle stays `$ref` too (the result holds no
 * cycle of objects): the import refuses the operations that use either, naming the reference
 * (importOpenApi()), and a component no selected operation uses stops nothing. Nothing is fetched
 * and nothing outside the document is read.
 *
 * @throws GatehouseError `INVALID_INPUT` when the document cannot be read or resolved, with the
 *   parser's explanation
 */
export async function dereferenceOpenApi(source: string | object): Promise<unknown> {
  try {
    // The parser resolves in place: work on a copy so the caller's object stays as it was.
    const api = typeof source === 'string' ? source : structuredClone(source);
    return await dereference(api as Parameters<typeof dereference>[0], {
      resolve: { external: false },
      dereference: { circular: 'ignore' },
      timeoutMs: 10_000,
    });
  } catch (e) {
    let message = e instanceof Error ? e.message : String(e);
    // The parser places a document given as an object at the working directory and names
    // references by it (`/srv/gatehouse/#/components/…`): a caller learns nothing by it but where
    // the gateway runs, so the reference is named from the document's root (`#/components/…`).
    if (typeof source !== 'string') message = message.split(`${process.cwd()}/#`).join('#');
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `OpenAPI import: the document cannot be resolved: ${message}`,
    );
  }
}
