import { describe, expect, it } from 'vitest';
import {
  filtersOf,
  fromLocalInput,
  listPath,
  localInput,
  pagePath,
} from '../../studio/src/invocation-filter-state.js';

describe("the Studio's invocation filters in the URL", () => {
  it('reads the known, non-empty filters of a query, and writes them back in a fixed order', () => {
    const f = filtersOf({
      environment: 'prod',
      tool: ' demo/echo ',
      agent: '',
      cursor: 'abc',
      bogus: 'x',
      from: '2026-01-01T00:00:00.000Z',
    });
    expect(f).toEqual({ tool: 'demo/echo', environment: 'prod', from: '2026-01-01T00:00:00.000Z' });
    expect(pagePath(f)).toBe(
      '/studio/invocations?tool=demo%2Fecho&environment=prod&from=2026-01-01T00%3A00%3A00.000Z',
    );
    expect(pagePath({}, 'c-1')).toBe('/studio/invocations?cursor=c-1');
    expect(pagePath({})).toBe('/studio/invocations');
    expect(listPath({ status: 'denied' }, 100)).toBe('/v1/invocations?status=denied&limit=100');
    expect(listPath({}, 100, 'c-1')).toBe('/v1/invocations?limit=100&cursor=c-1');
    const back = Object.fromEntries(new URLSearchParams(pagePath(f).split('?')[1]));
    expect(filtersOf(back)).toEqual(f);
  });

  it('shows an instant in a datetime-local input as local time to the minute, and reads it back', () => {
    const at = new Date(2026, 4, 17, 9, 5, 42).toISOString();
    expect(localInput(at)).toBe('2026-05-17T09:05');
    expect(fromLocalInput('2026-05-17T09:05')).toBe(new Date(2026, 4, 17, 9, 5).toISOString());
    expect(localInput(undefined)).toBe('');
    expect(localInput('not a time')).toBe('');
    expect(fromLocalInput('')).toBeUndefined();
    expect(fromLocalInput('garbage')).toBeUndefined();
  });
});
