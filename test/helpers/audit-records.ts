import { expect } from 'vitest';
import type { DemoGateway } from './gateway-fixture.js';

/** An audit record as `GET /v1/audit/records/:index` answers it. */
export interface AuditRecordAnswer {
  index: number;
  record: {
    type: string;
    subject: string;
    actor: string;
    tenant: string;
    data: Record<string, unknown>;
  };
  leaf: string;
  leafHash: string;
}

/** The size of the demo tenant's audit log now (a signed checkpoint of it), read as an operator. */
export async function logSize(g: DemoGateway): Promise<number> {
  const cp = await g.inject<{ treeSize: number }>('GET', '/v1/audit/checkpoint', {
    token: g.tokens.operator,
  });
  expect(cp.status).toBe(200);
  return cp.body.treeSize;
}

/** The demo tenant's records appended since its log had `from` records. */
export async function recordsSince(g: DemoGateway, from: number): Promise<AuditRecordAnswer[]> {
  const to = await logSize(g);
  const out: AuditRecordAnswer[] = [];
  for (let i = from; i < to; i++) {
    const r = await g.inject<AuditRecordAnswer>('GET', `/v1/audit/records/${i}`, {
      token: g.tokens.operator,
    });
    expect(r.status).toBe(200);
    out.push(r.body);
  }
  return out;
}
