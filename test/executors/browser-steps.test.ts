import { describe, expect, it } from 'vitest';
import { BrowserExecutor } from '../../src/executors/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';
import { browserTool } from './browser-fixture.js';

const executor = new BrowserExecutor();

function descriptor(
  execution: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): ToolDescriptor {
  return browserTool('test/b', execution, extra) as unknown as ToolDescriptor;
}

describe('browser descriptors at publication', () => {
  it('accepts allowed actions, a viewport and a step bound', () => {
    expect(
      executor.check(
        descriptor({
          allowedActions: ['goto', 'extract', 'screenshot'],
          viewport: { width: 800, height: 600 },
          maxSteps: 10,
        }),
      ),
    ).toBeNull();
  });

  it.each([
    [{}, /needs execution.allowedActions/],
    [{ allowedActions: [] }, /non-empty list/],
    [{ allowedActions: ['goto', 'hover'] }, /allowedActions\[1\] is "hover"/],
    [{ allowedActions: ['goto', 'goto'] }, /lists goto twice/],
    [{ allowedActions: ['goto'], viewport: { width: 10, height: 600 } }, /execution.viewport/],
    [{ allowedActions: ['goto'], viewport: { width: 800.5, height: 600 } }, /whole pixels/],
    [{ allowedActions: ['goto'], maxSteps: 0 }, /maxSteps/],
    [{ allowedActions: ['goto'], url: 'http://x' }, /execution.url is not a browser setting/],
  ])('refuses %j', (execution, why) => {
    expect(executor.check(descriptor(execution))).toMatch(why);
  });
});

describe('browser call input', () => {
  const d = descriptor(
    { allowedActions: ['goto', 'fill', 'extract'], maxSteps: 3 },
    { credentials: [{ ref: 'portal-password', scope: 'x', inject: { env: 'PORTAL_PASSWORD' } }] },
  );
  const problems = (input: unknown) => executor.inputCheck(d)(input);

  it('accepts steps of the allowed actions with their fields', () => {
    expect(
      problems({
        steps: [
          { action: 'goto', url: 'https://tickets.example/login' },
          { action: 'fill', selector: '#password', secret: 'portal-password' },
          { action: 'extract', selector: 'a', attribute: 'href' },
        ],
      }),
    ).toEqual([]);
  });

  it('points at each step that is not allowed, malformed or unsafe', () => {
    expect(
      problems({
        steps: [
          { action: 'click', selector: '#go' },
          { action: 'goto', url: 'file:///etc/passwd' },
          { action: 'fill', selector: '#q', value: 'a', secret: 'portal-password' },
        ],
      }),
    ).toEqual([
      {
        pointer: '/steps/0/action',
        message: expect.stringMatching(
          /^is click, which this tool does not allow \(allowed: goto, fill, extract\)/,
        ) as unknown,
      },
      { pointer: '/steps/1/url', message: expect.stringMatching(/file: URL/) as unknown },
      { pointer: '/steps/2/secret', message: 'fill takes one of value, secret, not both' },
    ]);
  });

  it.each([
    [{ steps: [{ action: 'goto', url: 'javascript:alert(1)' }] }, '/steps/0/url'],
    [{ steps: [{ action: 'goto', url: 'data:text/html,x' }] }, '/steps/0/url'],
    [{ steps: [{ action: 'goto', url: 'chrome://settings' }] }, '/steps/0/url'],
    [{ steps: [{ action: 'goto', url: 'http://u:p@tickets.example/' }] }, '/steps/0/url'],
    [{ steps: [{ action: 'goto' }] }, '/steps/0/url'],
    [{ steps: [{ action: 'goto', url: 'https://a.example/', extra: 1 }] }, '/steps/0/extra'],
    [{ steps: [{ action: 'fill', selector: '#p', secret: 'other' }] }, '/steps/0/secret'],
    [{ steps: [{ action: 'fill', selector: '#p' }] }, '/steps/0/value'],
    [{ steps: [{ action: 'extract', selector: '' }] }, '/steps/0/selector'],
    [{ steps: [] }, '/steps'],
    [{ steps: Array(4).fill({ action: 'goto', url: 'https://a.example/' }) }, '/steps'],
    [{}, '/steps'],
  ])('refuses %j at %s', (input, pointer) => {
    expect(problems(input).map((p) => p.pointer)).toContain(pointer);
  });

  it('refuses an action named after an Object.prototype member as no action at all', () => {
    for (const action of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      expect(problems({ steps: [{ action }] }), action).toEqual([
        {
          pointer: '/steps/0/action',
          message: expect.stringMatching(/^must be one of goto, /) as unknown,
        },
      ]);
    }
  });
});
