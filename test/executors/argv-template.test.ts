import { describe, expect, it } from 'vitest';
import { fillTemplate, ShellExecutor } from '../../src/executors/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';

describe('argv templates', () => {
  it('fills scalars, keeping each value inside its one element', () => {
    const input = { path: 'a b; rm -rf /', n: 3, yes: false, 'a/b': 'slash', 'm~n': 'tilde' };
    expect(fillTemplate('--path={/path}', input)).toBe('--path=a b; rm -rf /');
    expect(fillTemplate('{/n}:{/yes}', input)).toBe('3:false');
    expect(fillTemplate('{/a~1b} {/m~0n}', input)).toBe('slash tilde');
    expect(fillTemplate('{/list/1}', { list: ['x', 'y'] })).toBe('y');
  });

  it('follows own members only: inherited keys and array lengths are no values', () => {
    expect(() => fillTemplate('{/list/length}', { list: ['x'] })).toThrow(
      'the input has no value at /list/length',
    );
    expect(() => fillTemplate('{/constructor}', {})).toThrow('no value at /constructor');
    expect(() => fillTemplate('{/toString}', { a: 1 })).toThrow('no value at /toString');
  });

  it('refuses a value that is not a scalar, naming the pointer', () => {
    expect(() => fillTemplate('{/o}', { o: { p: 1 } })).toThrow(
      'the input at /o is not a string, number or boolean',
    );
  });
});

describe('shell descriptors', () => {
  const shell = new ShellExecutor();
  const descriptor = (execution: Record<string, unknown>) =>
    ({ kind: 'shell', execution }) as unknown as ToolDescriptor;

  it('refuses a placeholder that is no JSON pointer, naming the element', () => {
    expect(shell.check(descriptor({ argv: ['echo', '{/a~2}'] }))).toBe(
      'execution.argv[1]: the placeholder {/a~2} is not a JSON pointer (escape "~" as ~0 and "/" as ~1)',
    );
    expect(shell.check(descriptor({ argv: ['cat'], stdin: 'x {/y~} z' }))).toMatch(
      /^execution\.stdin: the placeholder \{\/y~\} is not a JSON pointer/,
    );
  });

  it('accepts valid templates', () => {
    expect(shell.check(descriptor({ argv: ['echo', '{/a~1b}', '{/x/0}'], stdin: '{/s}' }))).toBe(
      null,
    );
  });
});
