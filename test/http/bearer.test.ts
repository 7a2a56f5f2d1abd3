import { describe, expect, it } from 'vitest';
import { GatehouseError } from '../../src/core/index.js';
import { bearerToken } from '../../src/http/bearer.js';

describe('bearerToken', () => {
  it('returns the token of a Bearer header up to the length bound', () => {
    expect(bearerToken('Bearer abc', 'token', 3)).toBe('abc');
    expect(bearerToken(`Bearer ${'x'.repeat(512)}`, 'token', 512)).toBe('x'.repeat(512));
  });

  it.each([
    ['one character over the bound', 'Bearer abcd'],
    ['another scheme', 'Basic abc'],
    ['no token', 'Bearer '],
    ['a space inside the token', 'Bearer a c'],
    ['a control character', 'Bearer a\u0001c'],
  ])('refuses %s as UNAUTHENTICATED', (_what, header) => {
    const refuse = () => bearerToken(header, 'token', 3);
    expect(refuse).toThrow(GatehouseError);
    expect(refuse).toThrow(/must be "Bearer <token>"/);
  });

  it('refuses a missing header, naming the token', () => {
    expect(() => bearerToken(undefined, 'agent token', 3)).toThrow(/Bearer <agent token>/);
  });
});
