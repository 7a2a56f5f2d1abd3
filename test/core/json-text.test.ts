import { describe, expect, it } from 'vitest';
import { GatehouseError, jsonValueProblem, parseJsonText } from '../../src/core/index.js';

/** The error `parseJsonText` throws for `text`, as code, pointer and message. */
function refusal(
  text: string,
  maxDepth?: number,
): { code: string; pointer: unknown; message: string } {
  try {
    parseJsonText(text, 'The body', maxDepth);
  } catch (err) {
    if (!(err instanceof GatehouseError)) throw err;
    return { code: err.code, pointer: err.details.pointer, message: err.message };
  }
  throw new Error(`accepted ${text.slice(0, 80)}`);
}

const nest = (n: number, inner = '1') => '['.repeat(n) + inner + ']'.repeat(n);

describe('parseJsonText', () => {
  it('reads what JSON.parse reads, for ordinary documents', () => {
    const docs = [
      '{"a":[1,2,{"b":"c\\"}]{"}],"d":null,"e":true,"f":-1.5e-3}',
      '[]',
      '"just a string with [ and {"',
      '  {"k~/":{"":[[[]]]}}  ',
      '{"\\u0061":1,"b":"\\\\"}',
      '12345678901234567890',
      '1e308',
    ];
    for (const d of docs) expect(parseJsonText(d, 'The body')).toEqual(JSON.parse(d));
  });

  it('refuses nesting past the limit at the first container too deep, with its pointer', () => {
    expect(parseJsonText(nest(64), 'The body')).toEqual(JSON.parse(nest(64)));
    const deep = refusal(nest(10_000));
    expect(deep.code).toBe('INVALID_INPUT');
    expect(deep.pointer).toBe(`/${Array(64).fill('0').join('/')}`);
    expect(deep.message).toMatch(/^The body is refused at \/0\/0.*nest deeper than 64 levels/);
    const inObject = refusal('{"input":{"a":[{"b":[[[]]]}],"z":1}}', 5);
    expect(inObject.pointer).toBe('/input/a/0/b/0');
    const later = refusal('[0,1,{"x~y/z":[[[1]]]}]', 4);
    expect(later.pointer).toBe('/2/x~0y~1z/0/0');
    // Brackets inside strings do not count.
    expect(parseJsonText(`["${'['.repeat(200)}"]`, 'The body')).toEqual(['['.repeat(200)]);
  });

  it('refuses numbers that overflow to Infinity, saying where', () => {
    const r = refusal('{"input":{"n":[1,2,1e400]}}');
    expect(r.pointer).toBe('/input/n/2');
    expect(r.message).toMatch(/the number 1e400 is too large to be finite/);
    expect(refusal('-1E+999').pointer).toBe('');
    expect(refusal(`{"a":${'9'.repeat(400)}}`).pointer).toBe('/a');
    // Underflow to 0 is a finite number, and stays.
    expect(parseJsonText('[1e-400]', 'The body')).toEqual([0]);
  });

  it('refuses a repeated member name and __proto__, with their pointers', () => {
    const dup = refusal('{"tool":{"id":"a","id":"b"}}');
    expect(dup.pointer).toBe('/tool/id');
    expect(dup.message).toMatch(/"id" is repeated/);
    // The same name written two ways is the same name.
    expect(refusal('{"a":1,"\\u0061":2}').pointer).toBe('/a');
    // Names repeat freely in different objects.
    expect(parseJsonText('[{"a":1},{"a":2}]', 'The body')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(refusal('{"input":{"__proto__":{"polluted":true}}}').pointer).toBe('/input/__proto__');
  });

  it('refuses strings with a lone surrogate escape, keeping pairs and literal backslashes', () => {
    const r = refusal('{"policy":{"text":"abc\\ud800"}}');
    expect(r.pointer).toBe('/policy/text');
    expect(r.message).toMatch(/lone UTF-16 surrogate/);
    expect(refusal('["ok","\\udc00x"]').pointer).toBe('/1');
    expect(refusal('{"\\ud83dkey":1}').pointer).toBe('/\ud83dkey');
    expect(parseJsonText('["\\ud83d\\ude00","\\\\ud800"]', 'The body')).toEqual(['😀', '\\ud800']);
  });

  it('says what is wrong with text that is not JSON', () => {
    const r = refusal('{"a":');
    expect(r.code).toBe('INVALID_INPUT');
    expect(r.message).toMatch(/^The body is not valid JSON: /);
  });
});

describe('jsonValueProblem', () => {
  it('finds depth, non-finite numbers, __proto__ and values JSON cannot hold, by pointer', () => {
    expect(jsonValueProblem({ a: [1, 'x', null, { b: true }] })).toBeNull();
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonValueProblem({ x: deep })?.pointer).toBe(`/x${'/0'.repeat(63)}`);
    expect(jsonValueProblem({ a: [0, Infinity] })).toEqual({
      pointer: '/a/1',
      rule: 'number',
      reason: 'the number Infinity is not finite',
    });
    expect(jsonValueProblem({ a: { b: NaN } })?.pointer).toBe('/a/b');
    expect(jsonValueProblem(JSON.parse('{"q":{"__proto__":1}}'))?.pointer).toBe('/q/__proto__');
    expect(jsonValueProblem({ f: () => 1 })?.reason).toBe(
      'a value of type function has no JSON form',
    );
    expect(jsonValueProblem({ big: 1n })?.reason).toBe('a value of type bigint has no JSON form');
    expect(jsonValueProblem({ s: ['x', 'a\ud800'] })?.pointer).toBe('/s/1');
    expect(jsonValueProblem({ ['k\udfff']: 1 })?.pointer).toBe('/k\udfff');
    expect(jsonValueProblem({ s: '😀' })).toBeNull();
  });
});
