import { describe, expect, it } from 'vitest';
import {
  computerInputProblems,
  computerUseExecutionProblem,
} from '../../src/executors/computer-use/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';

function tool(execution: Record<string, unknown>): ToolDescriptor {
  return {
    id: 'test/desktop',
    version: '1.0.0',
    kind: 'computer-use',
    description: 'a desktop',
    inputSchema: { type: 'object' },
    sideEffect: { class: 'read' },
    execution,
  } as unknown as ToolDescriptor;
}

const desktop = tool({
  application: ['xterm'],
  allowedActions: ['screenshot', 'left_click', 'left_click_drag', 'type', 'key', 'scroll', 'wait'],
  display: { width: 200, height: 100 },
  maxActions: 3,
});

describe('computer-use descriptors', () => {
  it('accepts a complete config and says what is wrong with a bad one', () => {
    expect(computerUseExecutionProblem(desktop)).toBeNull();
    expect(computerUseExecutionProblem(tool({ allowedActions: ['screenshot'] }))).toMatch(
      /needs execution.application/,
    );
    expect(
      computerUseExecutionProblem(tool({ application: ['xterm'], allowedActions: ['zoom'] })),
    ).toMatch(/allowedActions\[0\] is "zoom"; known actions are screenshot/);
    expect(
      computerUseExecutionProblem(
        tool({
          application: ['xterm'],
          allowedActions: ['wait'],
          display: { width: 5, height: 5 },
        }),
      ),
    ).toMatch(/execution.display must be/);
    expect(
      computerUseExecutionProblem(
        tool({ application: ['xterm'], allowedActions: ['wait'], url: 'x' }),
      ),
    ).toMatch(/execution.url is not a computer-use setting/);
  });
});

describe('computer-use input', () => {
  it('accepts actions in the model-native shape', () => {
    expect(
      computerInputProblems(desktop, {
        actions: [
          { action: 'left_click_drag', start_coordinate: [0, 0], coordinate: [199, 99] },
          { action: 'scroll', coordinate: [10, 10], direction: 'down', amount: 5 },
          { action: 'key', text: 'ctrl+s Return' },
        ],
      }),
    ).toEqual([]);
  });

  it('points at each bad field, saying what is wrong and what to do', () => {
    const problems = computerInputProblems(desktop, {
      actions: [
        { action: 'left_click', coordinate: [200, 0] },
        { action: 'type', text: 'a\u0007b', extra: 1 },
        { action: 'scroll', coordinate: [1, 1], direction: 'sideways', amount: 0 },
      ],
    });
    expect(problems).toEqual([
      {
        pointer: '/actions/0/coordinate',
        message: 'is [200, 0], outside the display (200×100): x must be 0–199 and y 0–99',
      },
      { pointer: '/actions/1/extra', message: 'is not a field of type (its fields: text)' },
      {
        pointer: '/actions/1/text',
        message:
          'contains a control character; type types text, tabs and newlines (use key for others, e.g. ctrl+c)',
      },
      { pointer: '/actions/2/direction', message: 'must be one of up, down, left, right' },
      {
        pointer: '/actions/2/amount',
        message: 'must be a whole number of wheel clicks from 1 to 30',
      },
    ]);
  });

  it('refuses too many actions, an action not allowed, and input that is not {actions}', () => {
    expect(computerInputProblems(desktop, { steps: [] })[0]?.pointer).toBe('/actions');
    const many = computerInputProblems(desktop, {
      actions: [1, 2, 3, 4].map(() => ({ action: 'wait' })),
    });
    expect(many).toEqual([
      { pointer: '/actions', message: 'has 4 actions; this tool takes at most 3 per call' },
    ]);
    expect(computerInputProblems(desktop, { actions: [{ action: 'cursor_position' }] })).toEqual([
      {
        pointer: '/actions/0/action',
        message:
          'is cursor_position, which this tool does not allow (allowed: screenshot, left_click, left_click_drag, type, key, scroll, wait)',
      },
    ]);
  });
});
