import canonicalize from 'canonicalize';
import { concat, sha256, toHex, utf8 } from './bytes.js';

// canonicalize ships CommonJS typings (`export =`): the Studio's bundler resolution types the
// default import as the function, Node's (the tests import this file) as the module; at run time
// it is the function either way.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed under NodeNext
const canonicalText = canonicalize as unknown as (value: unknown) => string | undefined;

/** DSSE v1 pre-authentication encoding: the bytes a receipt's signature covers. */
export function pae(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = utf8(payloadType);
  return concat(utf8(`DSSEv1 ${type.length} `), type, utf8(` ${payload.length} `), payload);
}

/** RFC 8785 canonical JSON bytes. */
export function jcs(value: unknown): Uint8Array {
  const text = canonicalText(value);
  if (text === undefined) throw new Error('not JSON');
  return utf8(text);
}

/** What a request hash covers: these fields of a receipt's predicate. */
export interface RequestHashParts {
  tenant: string;
  project: string;
  environment: string;
  agent: { id: string; version: string };
  tool: { id: string; version: string };
  input: unknown;
}

/**
 * The request hash recomputed: lowercase hex SHA-256 of the RFC 8785 bytes of exactly
 * `{agent:{id,version}, environment, input, project, tenant, tool:{id,version}}`.
 */
export async function requestHash(p: RequestHashParts): Promise<string> {
  return toHex(
    await sha256(
      jcs({
        agent: { id: p.agent.id, version: p.agent.version },
        environment: p.environment,
        input: p.input,
        project: p.project,
        tenant: p.tenant,
        tool: { id: p.tool.id, version: p.tool.version },
      }),
    ),
  );
}

/** The fields of a checkpoint its signature covers. */
export interface TreeHeadFields {
  tenant: string;
  treeSize: number;
  rootHash: string;
  timestamp: string;
}

/** The bytes a checkpoint's signature covers: the RFC 8785 JSON of its four tree-head fields. */
export function checkpointMessage(cp: TreeHeadFields): Uint8Array {
  return jcs({
    rootHash: cp.rootHash,
    tenant: cp.tenant,
    timestamp: cp.timestamp,
    treeSize: cp.treeSize,
  });
}
