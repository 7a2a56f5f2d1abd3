import { describe, expect, it } from 'vitest';
import { demoBrowse } from '../../src/app/demo-browser-tools.js';
import type { ToolDescriptor } from '../../src/tools/index.js';
import { browserInputProblems } from '../../src/executors/browser/browser-steps.js';

describe('the steps of a browser call', () => {
  it('refuses an action named after an Object.prototype member as no action at all', () => {
    const d = demoBrowse as unknown as ToolDescriptor;
    for (const action of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      expect(browserInputProblems(d, { steps: [{ action }] }), action).toEqual([
        {
          pointer: '/steps/0/action',
          message: expect.stringMatching(/^must be one of goto, /) as unknown,
        },
      ]);
    }
    expect(
      browserInputProblems(d, { steps: [{ action: 'goto', url: 'https://a.test/' }] }),
    ).toEqual([]);
  });
});
