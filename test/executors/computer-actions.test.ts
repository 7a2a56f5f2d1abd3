import { describe, expect, it } from 'vitest';
import {
  computerInputProblems,
  computerUseExecutionProblem,
} from '../../src/executors/computer-use/index.js';
import { toDisplay, toScreen } from '../../src/executors/computer-use/screen-scale.js';
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

describe('a real screen larger than the declared display', () => {
  const scaled = (display: unknown, screen: unknown) =>
    computerUseExecutionProblem(
      tool({ application: ['xterm'], allowedActions: ['wait'], display, screen }),
    );

  it('is accepted at least the display, with its aspect ratio; otherwise the problem is named', () => {
    expect(scaled({ width: 1024, height: 768 }, { width: 2048, height: 1536 })).toBeNull();
    expect(scaled({ width: 1024, height: 576 }, { width: 1366, height: 768 })).toBeNull();
    expect(scaled(undefined, { width: 1280, height: 960 })).toBeNull();
    expect(scaled({ width: 1024, height: 768 }, { width: 800, height: 600 })).toMatch(
      /execution.screen \(800×600\) is smaller than the display the model sees \(1024×768\)/,
    );
    expect(scaled({ width: 1024, height: 768 }, { width: 1920, height: 1080 })).toMatch(
      /execution.screen \(1920×1080\) has another aspect ratio than the display \(1024×768\).*e.g. 1920×1440/,
    );
    expect(scaled({ width: 1024, height: 768 }, { width: 8000, height: 6000 })).toMatch(
      /execution.screen must be \{width, height\} in whole pixels, width 100–3840/,
    );
    expect(scaled(undefined, { width: 2048, height: 1536, depth: 24 })).toMatch(
      /execution.screen must be/,
    );
  });

  it('maps a display point to the centre of the screen pixels it stands for, and back', () => {
    const display = { width: 100, height: 50 };
    const screen = { width: 300, height: 150 };
    expect(toScreen([0, 0], display, screen)).toEqual([1, 1]);
    expect(toScreen([99, 49], display, screen)).toEqual([298, 148]);
    expect(toScreen([10, 20], display, display)).toEqual([10, 20]);
    for (const p of [
      [0, 0],
      [37, 11],
      [99, 49],
    ] as [number, number][])
      expect(toDisplay(toScreen(p, display, screen), display, screen)).toEqual(p);
    expect(toDisplay([299, 149], display, screen)).toEqual([99, 49]);
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
