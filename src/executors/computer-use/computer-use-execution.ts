import type { ToolDescriptor } from '../../tools/index.js';
import type { Size } from './screen-scale.js';

/** The actions a computer-use call may take, in the shape models already speak (DESIGN §10). */
export const ComputerAction = {
  screenshot: 'screenshot',
  leftClick: 'left_click',
  rightClick: 'right_click',
  doubleClick: 'double_click',
  mouseMove: 'mouse_move',
  leftClickDrag: 'left_click_drag',
  type: 'type',
  key: 'key',
  scroll: 'scroll',
  wait: 'wait',
  cursorPosition: 'cursor_position',
} as const;
export type ComputerAction = (typeof ComputerAction)[keyof typeof ComputerAction];

/** Every action's name. */
export const COMPUTER_ACTIONS = Object.values(ComputerAction) as string[];

/** The display when a descriptor declares none. */
export const DEFAULT_DISPLAY = { width: 1024, height: 768 } as const;
/** Bounds of a declared display (and of a real screen), in pixels. */
export const DISPLAY_BOUNDS = { min: 100, maxWidth: 3840, maxHeight: 2160 } as const;
/** How far a screen's aspect ratio may stray from its display's before screenshots look squashed. */
const ASPECT_TOLERANCE = 0.02;
/** Most actions one call may take when the descriptor does not say, and the most it may allow. */
export const DEFAULT_MAX_ACTIONS = 20;
export const MAX_ACTIONS_BOUND = 100;
/** Bounds of the application's command line. */
const APPLICATION_BOUNDS = { words: 64, characters: 1000 } as const;

/** The execution config of a `computer-use` descriptor. */
export interface ComputerUseExecution {
  /**
   * The application the display runs, as argv (e.g. `["xterm"]` or `["chromium", "--kiosk",
   * URL]`): a program on the sandbox's PATH or an absolute path, started once per attempt lease.
   */
  application: string[];
  /** The actions a call of this tool may use; any other is refused at validation. */
  allowedActions: ComputerAction[];
  /**
   * The display's size in pixels as the model sees it: screenshots have it and coordinates lie in
   * it. Default {@link DEFAULT_DISPLAY}.
   */
  display?: { width: number; height: number };
  /**
   * The real screen's size (Xvfb's), when larger than `display`: screenshots are scaled down to
   * `display` and coordinates scaled up to the screen, as computer-use APIs do for large screens.
   * At least `display` in both directions, with its aspect ratio (within 2%). Default: `display`.
   */
  screen?: { width: number; height: number };
  /** Most actions one call may take; default {@link DEFAULT_MAX_ACTIONS}. */
  maxActions?: number;
}

/** The execution config of a descriptor known to be `computer-use`. */
export function computerUseExecution(d: ToolDescriptor): ComputerUseExecution {
  return d.execution as unknown as ComputerUseExecution;
}

/** The display of a valid `computer-use` descriptor: the size the model sees. */
export function displayOf(d: ToolDescriptor): { width: number; height: number } {
  return computerUseExecution(d).display ?? { ...DEFAULT_DISPLAY };
}

/** The real screen of a valid `computer-use` descriptor: its `screen`, else its display. */
export function screenOf(d: ToolDescriptor): { width: number; height: number } {
  return computerUseExecution(d).screen ?? displayOf(d);
}

const SETTINGS = ['application', 'allowedActions', 'display', 'screen', 'maxActions'];

/**
 * Why a `computer-use` descriptor's execution config cannot run, or null: `application` a
 * non-empty argv of bounded non-empty strings; `allowedActions` a non-empty list of known actions
 * without repeats; `display` whole pixels within bounds; `maxActions` from 1 to
 * {@link MAX_ACTIONS_BOUND}; nothing else.
 */
export function computerUseExecutionProblem(d: ToolDescriptor): string | null {
  const c = d.execution;
  const extra = Object.keys(c).filter((k) => !SETTINGS.includes(k));
  if (extra.length > 0)
    return `execution.${extra[0]} is not a computer-use setting (${SETTINGS.join(', ')})`;
  const app = c.application;
  if (
    !Array.isArray(app) ||
    app.length === 0 ||
    app.length > APPLICATION_BOUNDS.words ||
    !app.every(
      (w) =>
        typeof w === 'string' &&
        w.length > 0 &&
        w.length <= APPLICATION_BOUNDS.characters &&
        !w.includes('\0'),
    )
  )
    return `a computer-use tool needs execution.application, the argv of the program its display runs (e.g. ["xterm"]): 1–${APPLICATION_BOUNDS.words} non-empty strings of at most ${APPLICATION_BOUNDS.characters} characters`;
  const actions = c.allowedActions;
  if (!Array.isArray(actions) || actions.length === 0)
    return `a computer-use tool needs execution.allowedActions, a non-empty list of ${COMPUTER_ACTIONS.join(', ')}`;
  for (const [i, a] of actions.entries()) {
    if (typeof a !== 'string' || !COMPUTER_ACTIONS.includes(a))
      return `execution.allowedActions[${i}] is ${JSON.stringify(a)}; known actions are ${COMPUTER_ACTIONS.join(', ')}`;
    if (actions.indexOf(a) !== i) return `execution.allowedActions lists ${a} twice`;
  }
  for (const key of ['display', 'screen'] as const)
    if (c[key] !== undefined && !isSize(c[key]))
      return `execution.${key} must be {width, height} in whole pixels, width ${DISPLAY_BOUNDS.min}–${DISPLAY_BOUNDS.maxWidth} and height ${DISPLAY_BOUNDS.min}–${DISPLAY_BOUNDS.maxHeight}`;
  if (c.screen !== undefined) {
    const problem = screenProblem(
      c.screen as Size,
      (c.display as Size | undefined) ?? DEFAULT_DISPLAY,
    );
    if (problem !== null) return problem;
  }
  if (c.maxActions !== undefined && !isWhole(c.maxActions, 1, MAX_ACTIONS_BOUND))
    return `execution.maxActions must be a whole number from 1 to ${MAX_ACTIONS_BOUND}`;
  return null;
}

function isSize(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const s = v as Record<string, unknown>;
  return (
    Object.keys(s).every((k) => k === 'width' || k === 'height') &&
    isWhole(s.width, DISPLAY_BOUNDS.min, DISPLAY_BOUNDS.maxWidth) &&
    isWhole(s.height, DISPLAY_BOUNDS.min, DISPLAY_BOUNDS.maxHeight)
  );
}

/** Why a real screen cannot be shown scaled to the declared display, or null. */
function screenProblem(screen: Size, display: Size): string | null {
  const shown = `${display.width}×${display.height}`;
  if (screen.width < display.width || screen.height < display.height)
    return `execution.screen (${screen.width}×${screen.height}) is smaller than the display the model sees (${shown}); a screen is at least the display in both directions (screenshots are scaled down, never up)`;
  const ratio = screen.width / screen.height / (display.width / display.height);
  if (Math.abs(ratio - 1) > ASPECT_TOLERANCE) {
    const height = Math.round((screen.width * display.height) / display.width);
    return `execution.screen (${screen.width}×${screen.height}) has another aspect ratio than the display (${shown}), so screenshots would be distorted; keep the ratio, e.g. ${screen.width}×${height}`;
  }
  return null;
}

function isWhole(n: unknown, min: number, max: number): boolean {
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;
}
