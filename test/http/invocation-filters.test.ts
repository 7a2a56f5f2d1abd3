import { describe, expect, it } from 'vitest';
import { GatehouseError } from '../../src/core/index.js';
import { invocationQuery } from '../../src/http/invocation-filters.js';

/** The error `invocationQuery(q)` throws: its message and details. */
function refusal(q: Record<string, unknown>): { message: string; details: unknown } {
  try {
    invocationQuery(q);
  } catch (e) {
    expect(e).toBeInstanceOf(GatehouseError);
    const err = e as GatehouseError;
    expect(err.code).toBe('INVALID_INPUT');
    return { message: err.message, details: err.details };
  }
  throw new Error(`accepted ${JSON.stringify(q)}`);
}

describe('the filters of GET /v1/invocations', () => {
  it('reads every filter into the store query, instants in the stored form', () => {
    expect(invocationQuery({})).toEqual({ limit: 50 });
    expect(
      invocationQuery({
        status: 'uncertain',
        tool: 'demo/echo',
        toolVersion: '1.0.0',
        agent: 'demo-agent',
        environment: 'prod',
        from: '2026-01-01T10:00:00+02:00',
        to: '2026-01-02',
        limit: '900',
        cursor: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      }),
    ).toEqual({
      status: 'uncertain',
      tool: { id: 'demo/echo', version: '1.0.0' },
      agent: 'demo-agent',
      environment: 'prod',
      from: '2026-01-01T08:00:00.000Z',
      to: '2026-01-02T00:00:00.000Z',
      limit: 500,
      before: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    });
    expect(invocationQuery({ tool: 'demo/echo' }).tool).toEqual({ id: 'demo/echo' });
    expect(invocationQuery({ from: '2026-03-04t05:06:07.891234z' }).from).toBe(
      '2026-03-04T05:06:07.891Z',
    );
  });

  it('refuses a malformed filter naming the parameter, what it must be, and what it got', () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ status: 'done' }, 'status', /must be one of .*observed.*; got "done"/],
      [{ toolVersion: '1.0.0' }, 'toolVersion', /needs tool/],
      [{ tool: '' }, 'tool', /must be 1–256 characters/],
      [{ agent: 'a'.repeat(257) }, 'agent', /must be 1–256 characters/],
      [{ from: 'yesterday' }, 'from', /ISO 8601 instant with a time zone.*got "yesterday"/],
      [{ from: '2026-01-01T10:00:00' }, 'from', /with a time zone/],
      [{ to: '2026-02-30' }, 'to', /ISO 8601/],
      [{ to: '2026-01-01T24:00:00Z' }, 'to', /ISO 8601/],
      [{ from: '0000-01-01T00:00:00+01:00' }, 'from', /ISO 8601/],
      [
        { from: '2026-01-02', to: '2026-01-01' },
        'to',
        /is before from \(2026-01-02T00:00:00\.000Z\)/,
      ],
      [{ cursor: "x' or 1=1" }, 'cursor', /nextCursor of an earlier answer/],
      [{ status: ['observed', 'failed'] }, 'status', /more than once/],
      [{ principal: 'p-1' }, 'principal', /is not a filter.*use status, tool/],
      [{ constructor: '1' }, 'constructor', /is not a filter/],
      [{ toString: '1' }, 'toString', /is not a filter/],
      [{ hasOwnProperty: '1' }, 'hasOwnProperty', /is not a filter/],
    ];
    for (const [q, parameter, message] of cases) {
      const r = refusal(q);
      expect(r.details, JSON.stringify(q)).toEqual({ parameter });
      expect(r.message, JSON.stringify(q)).toMatch(new RegExp(`^Query parameter ${parameter} `));
      expect(r.message, JSON.stringify(q)).toMatch(message);
    }
    expect(refusal({ limit: '-1' }).message).toMatch(/limit must be a non-negative integer/);
  });
});
