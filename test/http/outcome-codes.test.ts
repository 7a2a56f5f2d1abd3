import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENIALS, FailureCode, RETRYABLE_FAILURES } from '../../src/core/index.js';
import type { DenialCode } from '../../src/core/index.js';
import { HTTP_STATUS_OF_DENIAL, invocationStatusCode } from '../../src/http/error-status.js';
import { recordResult } from '../../src/http/mcp-endpoint/results.js';
import type { InvocationRecord, InvocationStatus } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

const denials = Object.keys(DENIALS) as DenialCode[];
const failures = Object.values(FailureCode);

/** A record ended with `status` and `code`; only what the edges read is filled in. */
function ended(status: InvocationStatus, code: string): InvocationRecord {
  return {
    id: 'inv-1',
    status,
    requestHash: 'h',
    approvalId: null,
    tool: { id: 't/x', version: '1.0.0', descriptorDigest: null },
    error: { code, message: `because ${code}`, stage: 'execute' },
  } as unknown as InvocationRecord;
}

/** The codes of the bullet of docs/api.md's code list that starts with `label`. */
function documented(label: string): string[] {
  const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const list = text.split('The `error.code` of a denied or failed record says why')[1] ?? '';
  const bullet =
    list
      .split(/^- /m)
      .find((b) => b.startsWith(label))
      ?.split('\n\n')[0] ?? '';
  return [...bullet.matchAll(/`([A-Z][A-Z_]+)`/g)].map((m) => m[1]!);
}

describe('outcome codes', () => {
  it('docs/api.md lists exactly the codes of the tables, each with its status', () => {
    const invalid = denials.filter((c) => DENIALS[c].invalidRequest);
    expect(documented('Denied, 422').sort()).toEqual(invalid.sort());
    expect(documented('Denied, 403').sort()).toEqual(
      denials.filter((c) => !DENIALS[c].invalidRequest).sort(),
    );
    const retryable = failures.filter((c) => RETRYABLE_FAILURES.has(c));
    expect(documented('Failed (200), retryable').sort()).toEqual(retryable.sort());
    expect(documented('Failed or uncertain, 200').sort()).toEqual(
      failures.filter((c) => !RETRYABLE_FAILURES.has(c)).sort(),
    );
  });

  it('every denial answers its table status over HTTP and an isError result with its code over MCP', () => {
    for (const code of denials) {
      const record = ended('denied', code);
      expect(invocationStatusCode(record), code).toBe(HTTP_STATUS_OF_DENIAL[code]);
      expect(HTTP_STATUS_OF_DENIAL[code], code).toBe(DENIALS[code].invalidRequest ? 422 : 403);
      const result = recordResult(record, {});
      expect(result.isError, code).toBe(true);
      expect(result._meta?.['gatehouse/error']).toMatchObject({ code });
    }
  });

  it('every failure answers 200 with the record over HTTP and an isError result with its code over MCP', () => {
    for (const code of failures) {
      expect(invocationStatusCode(ended('failed', code)), code).toBe(200);
      expect(invocationStatusCode(ended('uncertain', code)), code).toBe(200);
      const result = recordResult(ended('failed', code), {});
      expect(result.isError, code).toBe(true);
      expect(result._meta?.['gatehouse/error']).toMatchObject({ code });
    }
  });
});

describe('outcome codes through a running gateway', () => {
  let g: DemoGateway;
  beforeAll(async () => {
    g = await startDemoGateway();
  });
  afterAll(async () => {
    await g?.close();
  });

  it('answers each denial it is asked for with the status of the table', async () => {
    const asks: [string, unknown, DenialCode][] = [
      ['unknown-tool', call('demo/nothing-here', {}), 'UNKNOWN_TOOL'],
      ['unknown-env', call('demo/echo', { message: 'hi' }, 'nowhere'), 'UNKNOWN_ENVIRONMENT'],
      ['bad-input', call('demo/echo', { nope: 1 }), 'INVALID_INPUT'],
      [
        'policy',
        call('demo/propose-change', { title: 't', diff: 'd', target: 'main' }),
        'POLICY_DENIED',
      ],
    ];
    for (const [key, body, code] of asks) {
      const res = await g.invoke(g.tokens.agent, `codes-${key}`, body);
      expect(res.body.error?.code, key).toBe(code);
      expect(res.status, key).toBe(HTTP_STATUS_OF_DENIAL[code]);
    }
  });
});
