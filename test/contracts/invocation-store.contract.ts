import { describe, expect, it } from 'vitest';
import type { AuditPosition } from '../../src/core/index.js';
import type {
  InvocationQuery,
  InvocationRecord,
  InvocationStore,
} from '../../src/invocation/index.js';
import { at, invocationRecord, ledgerOf } from '../helpers/invocation-records.js';

/**
 * The contract every {@link InvocationStore} keeps. Registers a vitest suite named `name`; `make`
 * gives a fresh, empty store (and an empty audit log) for each test.
 */
export function invocationStoreContract(
  name: string,
  make: () => Promise<{ store: InvocationStore; close(): Promise<void> }>,
): void {
  async function withStore(body: (store: InvocationStore) => Promise<void>): Promise<void> {
    const made = await make();
    try {
      await body(made.store);
    } finally {
      await made.close();
    }
  }

  const record = invocationRecord;
  const ledger = ledgerOf;

  const save = (store: InvocationStore, r: InvocationRecord, n = 1) =>
    store.save({ record: r, ledger: ledger(r, n) });

  describe(`InvocationStore contract: ${name}`, () => {
    it('gives back a saved record by id and by idempotency key, with its audit position', () =>
      withStore(async (store) => {
        const r = record(1);
        const position = await save(store, r);
        expect(position).toEqual({ index: 0, treeSize: 1 });
        const expected = { ...record(1), audit: position };
        expect(await store.get('acme', r.id)).toEqual(expected);
        expect(await store.findByKey('acme', 'p-1', 'key-1')).toEqual(expected);
      }));

    it('finds nothing across tenants, principals or keys', () =>
      withStore(async (store) => {
        await save(store, record(1));
        expect(await store.get('globex', record(1).id)).toBeUndefined();
        expect(await store.get('acme', 'nope')).toBeUndefined();
        expect(await store.findByKey('globex', 'p-1', 'key-1')).toBeUndefined();
        expect(await store.findByKey('acme', 'p-2', 'key-1')).toBeUndefined();
        expect(await store.findByKey('acme', 'p-1', 'key-2')).toBeUndefined();
      }));

    it('replaces the record when a later step of the same invocation is saved', () =>
      withStore(async (store) => {
        await save(store, record(1, { status: 'running' }));
        const done = record(1, { status: 'failed', updatedAt: at(30), completedAt: at(30) });
        const position = await save(store, done);
        expect(await store.get('acme', done.id)).toEqual({ ...done, audit: position });
        expect(await store.listByStatus('running')).toEqual([]);
        expect((await store.listByStatus('failed')).map((r) => r.id)).toEqual([done.id]);
      }));

    it('lists a tenant newest first, filtered by status and principal, up to the limit', () =>
      withStore(async (store) => {
        await save(store, record(1));
        await save(store, record(2, { status: 'denied' }));
        await save(store, record(3, { principal: 'p-2' }));
        await save(store, record(4));
        await save(store, record(5, { tenant: 'globex' }));
        const ids = (rs: InvocationRecord[]) => rs.map((r) => Number(r.id.slice(-5)));
        expect(ids(await store.list('acme', { limit: 10 }))).toEqual([4, 3, 2, 1]);
        expect(ids(await store.list('acme', { limit: 2 }))).toEqual([4, 3]);
        expect(ids(await store.list('acme', { limit: 10, status: 'observed' }))).toEqual([4, 3, 1]);
        expect(ids(await store.list('acme', { limit: 10, principal: 'p-2' }))).toEqual([3]);
        expect(
          ids(await store.list('acme', { limit: 10, principal: 'p-1', status: 'denied' })),
        ).toEqual([2]);
        expect(ids(await store.list('globex', { limit: 10 }))).toEqual([5]);
      }));

    it('filters by tool (with or without version), agent, environment and time, within the tenant', () =>
      withStore(async (store) => {
        const tool = (id: string, version: string) => ({
          id,
          version,
          descriptorDigest: 'a'.repeat(64),
        });
        await save(store, record(1, { tool: tool('demo.echo', '2.0.0') }));
        await save(store, record(2, { agent: { id: 'reviewer-bot', version: '1.0.0' } }));
        await save(store, record(3, { environment: 'prod' }));
        await save(store, record(4, { tool: tool('demo.echo-more', '1.0.0') }));
        await save(store, record(5, { tenant: 'globex', environment: 'prod' }));
        await save(store, record(6, { principal: 'p-2', environment: 'prod' }));
        const ids = (rs: InvocationRecord[]) => rs.map((r) => Number(r.id.slice(-5)));
        const list = async (q: Omit<InvocationQuery, 'limit'>) =>
          ids(await store.list('acme', { limit: 10, ...q }));
        expect(await list({ tool: { id: 'demo.echo' } })).toEqual([6, 3, 2, 1]);
        expect(await list({ tool: { id: 'demo.echo', version: '2.0.0' } })).toEqual([1]);
        expect(await list({ tool: { id: 'demo.echo', version: '9.9.9' } })).toEqual([]);
        expect(await list({ tool: { id: 'demo' } })).toEqual([]);
        expect(await list({ agent: 'reviewer-bot' })).toEqual([2]);
        expect(await list({ agent: 'coder' })).toEqual([6, 4, 3, 1]);
        expect(await list({ environment: 'prod' })).toEqual([6, 3]);
        expect(await list({ environment: 'prod', principal: 'p-1' })).toEqual([3]);
        expect(await list({ from: at(2) })).toEqual([6, 4, 3, 2]);
        expect(await list({ to: at(2) })).toEqual([1]);
        expect(await list({ from: at(2), to: at(4) })).toEqual([3, 2]);
        expect(await list({ from: at(4), to: at(2) })).toEqual([]);
        expect(ids(await store.list('globex', { limit: 10, environment: 'prod' }))).toEqual([5]);
      }));

    it('pages newest first with before, every filter holding on each page', () =>
      withStore(async (store) => {
        for (let n = 1; n <= 9; n++)
          await save(store, record(n, n % 3 === 0 ? { environment: 'prod' } : {}));
        await save(store, record(10, { tenant: 'globex', environment: 'prod' }));
        const ids = (rs: InvocationRecord[]) => rs.map((r) => Number(r.id.slice(-5)));
        const pages: number[][] = [];
        let before: string | undefined;
        for (;;) {
          const page = await store.list('acme', {
            limit: 2,
            environment: 'dev',
            ...(before !== undefined ? { before } : {}),
          });
          if (page.length === 0) break;
          pages.push(ids(page));
          before = page[page.length - 1]!.id;
        }
        expect(pages).toEqual([
          [8, 7],
          [5, 4],
          [2, 1],
        ]);
        expect(
          ids(await store.list('acme', { limit: 5, environment: 'prod', before: record(9).id })),
        ).toEqual([6, 3]);
        expect(ids(await store.list('acme', { limit: 5, before: record(1).id }))).toEqual([]);
      }));

    it('lists one state across every tenant', () =>
      withStore(async (store) => {
        await save(store, record(1, { status: 'uncertain' }));
        await save(store, record(2, { status: 'uncertain', tenant: 'globex' }));
        await save(store, record(3));
        const found = await store.listByStatus('uncertain');
        expect(found.map((r) => [r.tenant, r.id]).sort()).toEqual(
          [
            ['acme', record(1).id],
            ['globex', record(2).id],
          ].sort(),
        );
        expect(await store.listByStatus('queued')).toEqual([]);
      }));

    it('lists one state of the nodes asked for, null standing for records without a node', () =>
      withStore(async (store) => {
        await save(store, record(1, { status: 'running', node: 'node-a' }));
        await save(store, record(2, { status: 'running', node: 'node-b' }));
        await save(store, record(3, { status: 'running' }));
        await save(store, record(4, { status: 'observed', node: 'node-a' }));
        const ids = (rs: InvocationRecord[]) => rs.map((r) => Number(r.id.slice(-5)));
        expect(ids(await store.listByStatus('running', ['node-a']))).toEqual([1]);
        expect(ids(await store.listByStatus('running', ['node-b', null]))).toEqual([2, 3]);
        expect(ids(await store.listByStatus('running', [null]))).toEqual([3]);
        expect(ids(await store.listByStatus('running', []))).toEqual([]);
        expect(ids(await store.listByStatus('running'))).toEqual([1, 2, 3]);
        // A later step by another node moves the record to that node.
        await save(store, record(1, { status: 'running', node: 'node-b', updatedAt: at(40) }));
        expect(ids(await store.listByStatus('running', ['node-b']))).toEqual([1, 2]);
        expect((await store.get('acme', record(1).id))?.node).toBe('node-b');
      }));

    it('writes a step with an expected status only while the stored record has it', () =>
      withStore(async (store) => {
        await save(store, record(1, { status: 'running' }));
        const settled = record(1, { status: 'uncertain', updatedAt: at(30) });
        await store.save({ record: settled, ledger: ledger(settled), expectedStatus: 'running' });
        expect((await store.get('acme', settled.id))?.status).toBe('uncertain');
        // A second settling (another node, a moment later) is refused and writes nothing.
        const again = record(1, { status: 'failed', updatedAt: at(31) });
        const refused = await store
          .save({ record: again, ledger: ledger(again, 3), expectedStatus: 'running' })
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        expect(refused).toMatchObject({ code: 'CONFLICT' });
        expect((await store.get('acme', settled.id))?.status).toBe('uncertain');
        // Nothing of the refused step reached the log: the next audit record follows the first.
        const next = await save(store, record(2));
        expect(next).toEqual({ index: 2, treeSize: 3 });
      }));

    it('stores the receipt that seal returns, sealed at the last audit position', () =>
      withStore(async (store) => {
        await save(store, record(9, { idempotencyKey: 'other' }));
        const r = record(1);
        let sealedAt: AuditPosition | undefined;
        const position = await store.save({
          record: r,
          ledger: ledger(r, 3),
          seal: (last) => {
            sealedAt = last;
            return { payloadType: 'application/vnd.in-toto+json', payload: 'e30', at: last };
          },
        });
        expect(position).toEqual({ index: 3, treeSize: 4 });
        expect(sealedAt).toEqual(position);
        expect(r.audit).toEqual(position);
        expect((await store.get('acme', r.id))?.audit).toEqual(position);
        expect(await store.receipt('acme', r.id)).toEqual({
          payloadType: 'application/vnd.in-toto+json',
          payload: 'e30',
          at: position,
        });
        expect(await store.receipt('globex', r.id)).toBeUndefined();
        expect(await store.receipt('acme', record(9).id)).toBeUndefined();
      }));

    it('numbers audit records per tenant from 0, contiguous across saves', () =>
      withStore(async (store) => {
        expect(await save(store, record(1), 2)).toEqual({ index: 1, treeSize: 2 });
        expect(await save(store, record(2, { tenant: 'globex' }))).toEqual({
          index: 0,
          treeSize: 1,
        });
        expect(await save(store, record(3), 1)).toEqual({ index: 2, treeSize: 3 });
        expect(await save(store, record(1, { status: 'failed' }), 3)).toEqual({
          index: 5,
          treeSize: 6,
        });
        expect(await save(store, record(4, { tenant: 'globex' }), 2)).toEqual({
          index: 2,
          treeSize: 3,
        });
      }));

    it('keeps contiguous numbering when saves are made concurrently', () =>
      withStore(async (store) => {
        const positions = await Promise.all(
          Array.from({ length: 20 }, (_, i) => save(store, record(i + 1))),
        );
        expect(positions.map((p) => p.index).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 20 }, (_, i) => i),
        );
      }));

    it('leaves nothing behind when a save fails', () =>
      withStore(async (store) => {
        const r = record(1);
        await expect(
          store.save({
            record: r,
            ledger: ledger(r, 2),
            seal: () => {
              throw new Error('signer unavailable');
            },
          }),
        ).rejects.toThrow('signer unavailable');
        expect(await store.get('acme', r.id)).toBeUndefined();
        expect(await store.findByKey('acme', 'p-1', 'key-1')).toBeUndefined();
        expect(await store.receipt('acme', r.id)).toBeUndefined();
        // Its audit records were not kept either: the next save starts the log.
        expect(await save(store, record(2))).toEqual({ index: 0, treeSize: 1 });
      }));

    it('keeps the previous step when a later one fails', () =>
      withStore(async (store) => {
        const running = record(1, { status: 'running' });
        const first = await save(store, running);
        const done = record(1, { status: 'observed', updatedAt: at(9) });
        await expect(
          store.save({
            record: done,
            ledger: ledger(done),
            seal: () => {
              throw new Error('boom');
            },
          }),
        ).rejects.toThrow('boom');
        expect(await store.get('acme', running.id)).toEqual({ ...running, audit: first });
        expect(await store.receipt('acme', running.id)).toBeUndefined();
      }));
  });
}
