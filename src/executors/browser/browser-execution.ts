import type { ToolDescriptor } from '../../tools/index.js';

/** The actions a browser step may take (DESIGN §10). */
export const BrowserAction = {
  goto: 'goto',
  click: 'click',
  fill: 'fill',
  press: 'press',
  select: 'select',
  waitFor: 'waitFor',
  extract: 'extract',
  screenshot: 'screenshot',
} as const;
export type BrowserAction = (typeof BrowserAction)[keyof typeof BrowserAction];

const ACTIONS = Object.values(BrowserAction) as string[];

/** The viewport when a descriptor declares none. */
export const DEFAULT_VIEWPORT = { width: 1280, height: 800 } as const;
/** Bounds of a declared viewport, in CSS pixels. */
export const VIEWPORT_BOUNDS = { min: 100, maxWidth: 3840, maxHeight: 2160 } as const;
/** Most steps one call may take when the descriptor does not say. */
export const DEFAULT_MAX_STEPS = 50;
/** The most a descriptor may allow. */
export const MAX_STEPS_BOUND = 200;

/** The execution config of a `browser` descriptor. */
export interface BrowserExecution {
  /** The step actions a call of this tool may use; any other step is refused at validation. */
  allowedActions: BrowserAction[];
  /** The page size in CSS pixels (screenshots have it); default {@link DEFAULT_VIEWPORT}. */
  viewport?: { width: number; height: number };
  /** Most steps one call may take; default {@link DEFAULT_MAX_STEPS}. */
  maxSteps?: number;
}

/** The execution config of a descriptor known to be `browser`. */
export function browserExecution(d: ToolDescriptor): BrowserExecution {
  return d.execution as unknown as BrowserExecution;
}

/** The viewport of a valid `browser` descriptor. */
export function viewportOf(d: ToolDescriptor): { width: number; height: number } {
  return browserExecution(d).viewport ?? { ...DEFAULT_VIEWPORT };
}

/**
 * Why a `browser` descriptor's execution config cannot run, or null: `allowedActions` a
 * non-empty list of known actions without repeats; `viewport` whole pixels within bounds;
 * `maxSteps` from 1 to {@link MAX_STEPS_BOUND}; nothing else.
 */
export function browserExecutionProblem(d: ToolDescriptor): string | null {
  const c = d.execution;
  const extra = Object.keys(c).filter(
    (k) => !['allowedActions', 'viewport', 'maxSteps'].includes(k),
  );
  if (extra.length > 0)
    return `execution.${extra[0]} is not a browser setting (allowedActions, viewport, maxSteps)`;
  const actions = c.allowedActions;
  if (!Array.isArray(actions) || actions.length === 0)
    return `a browser tool needs execution.allowedActions, a non-empty list of ${ACTIONS.join(', ')}`;
  for (const [i, a] of actions.entries()) {
    if (typeof a !== 'string' || !ACTIONS.includes(a))
      return `execution.allowedActions[${i}] is ${JSON.stringify(a)}; known actions are ${ACTIONS.join(', ')}`;
    if (actions.indexOf(a) !== i) return `execution.allowedActions lists ${a} twice`;
  }
  if (c.viewport !== undefined) {
    const v = c.viewport as Record<string, unknown>;
    const ok =
      typeof v === 'object' &&
      v !== null &&
      Object.keys(v).every((k) => k === 'width' || k === 'height') &&
      isWhole(v.width, VIEWPORT_BOUNDS.min, VIEWPORT_BOUNDS.maxWidth) &&
      isWhole(v.height, VIEWPORT_BOUNDS.min, VIEWPORT_BOUNDS.maxHeight);
    if (!ok)
      return `execution.viewport must be {width, height} in whole pixels, width ${VIEWPORT_BOUNDS.min}–${VIEWPORT_BOUNDS.maxWidth} and height ${VIEWPORT_BOUNDS.min}–${VIEWPORT_BOUNDS.maxHeight}`;
  }
  if (c.maxSteps !== undefined && !isWhole(c.maxSteps, 1, MAX_STEPS_BOUND))
    return `execution.maxSteps must be a whole number from 1 to ${MAX_STEPS_BOUND}`;
  return null;
}

function isWhole(n: unknown, min: number, max: number): boolean {
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;
}
