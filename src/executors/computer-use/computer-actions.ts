import type { SchemaViolation, ToolDescriptor } from '../../tools/index.js';
import {
  COMPUTER_ACTIONS,
  DEFAULT_MAX_ACTIONS,
  computerUseExecution,
  displayOf,
} from './computer-use-execution.js';

/** A point on the display: [x, y] in whole pixels from its top-left corner. */
export type Coordinate = [number, number];
/** Where `scroll` turns the wheel. */
export type ScrollDirection = 'up' | 'down' | 'left' | 'right';

/** One action of a computer-use call. */
export type ComputerStep =
  | { action: 'screenshot' }
  | { action: 'cursor_position' }
  | { action: 'left_click' | 'right_click' | 'double_click' | 'mouse_move'; coordinate: Coordinate }
  | { action: 'left_click_drag'; start_coordinate?: Coordinate; coordinate: Coordinate }
  | { action: 'type'; text: string }
  | { action: 'key'; text: string }
  | { action: 'scroll'; coordinate: Coordinate; direction: ScrollDirection; amount?: number }
  | { action: 'wait'; duration?: number };

/** Most characters one `type` action types, and most a `key` action names. */
export const MAX_TYPE_CHARACTERS = 2000;
export const MAX_KEY_CHARACTERS = 100;
/** Most wheel clicks of one `scroll`, and its default. */
export const MAX_SCROLL_AMOUNT = 30;
export const DEFAULT_SCROLL_AMOUNT = 3;
/** Longest `wait`, in seconds, and its default. */
export const MAX_WAIT_SECONDS = 10;
export const DEFAULT_WAIT_SECONDS = 1;

/** Each action's fields: required ones, then optional ones. */
const FIELDS: Record<string, { required: string[]; optional: string[] }> = {
  screenshot: { required: [], optional: [] },
  cursor_position: { required: [], optional: [] },
  left_click: { required: ['coordinate'], optional: [] },
  right_click: { required: ['coordinate'], optional: [] },
  double_click: { required: ['coordinate'], optional: [] },
  mouse_move: { required: ['coordinate'], optional: [] },
  left_click_drag: { required: ['coordinate'], optional: ['start_coordinate'] },
  type: { required: ['text'], optional: [] },
  key: { required: ['text'], optional: [] },
  scroll: { required: ['coordinate', 'direction'], optional: ['amount'] },
  wait: { required: [], optional: ['duration'] },
};

/** One X keysym chord (`ctrl+s`, `Return`, `shift+Tab`); several are separated by spaces. */
const CHORD = /^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$/;
/** Control characters `type` refuses: all but tab and newline, which it types as keys. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/**
 * What is wrong with a computer-use call's input for this descriptor, beyond its input schema:
 * `{actions: [...]}` of allowed actions within the descriptor's bound, each with its own fields,
 * coordinates inside the declared display, bounded text, keys named as X keysyms.
 */
export function computerInputProblems(d: ToolDescriptor, input: unknown): SchemaViolation[] {
  const c = computerUseExecution(d);
  if (
    typeof input !== 'object' ||
    input === null ||
    !Array.isArray((input as { actions?: unknown }).actions)
  )
    return [
      {
        pointer: '/actions',
        message: 'is required: a computer-use call is {actions: [{action: ...}, ...]}',
      },
    ];
  const actions = (input as { actions: unknown[] }).actions;
  const max = c.maxActions ?? DEFAULT_MAX_ACTIONS;
  const problems: SchemaViolation[] = [];
  if (actions.length === 0)
    problems.push({
      pointer: '/actions',
      message: 'is empty; give at least one action (e.g. {"action": "screenshot"})',
    });
  if (actions.length > max)
    problems.push({
      pointer: '/actions',
      message: `has ${actions.length} actions; this tool takes at most ${max} per call`,
    });
  const display = displayOf(d);
  actions
    .slice(0, max)
    .forEach((a, i) =>
      problems.push(...actionProblems(a, `/actions/${i}`, c.allowedActions, display)),
    );
  return problems;
}

function actionProblems(
  value: unknown,
  at: string,
  allowed: readonly string[],
  display: { width: number; height: number },
): SchemaViolation[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [{ pointer: at, message: 'must be an object {action, ...}' }];
  const a = value as Record<string, unknown>;
  const action = a.action;
  if (typeof action !== 'string' || !COMPUTER_ACTIONS.includes(action))
    return [{ pointer: `${at}/action`, message: `must be one of ${COMPUTER_ACTIONS.join(', ')}` }];
  if (!allowed.includes(action))
    return [
      {
        pointer: `${at}/action`,
        message: `is ${action}, which this tool does not allow (allowed: ${allowed.join(', ')})`,
      },
    ];
  const spec = FIELDS[action]!;
  const problems: SchemaViolation[] = [];
  for (const k of Object.keys(a))
    if (k !== 'action' && !spec.required.includes(k) && !spec.optional.includes(k))
      problems.push({
        pointer: `${at}/${k}`,
        message: `is not a field of ${action} (its fields: ${[...spec.required, ...spec.optional].join(', ') || 'none'})`,
      });
  for (const k of spec.required)
    if (a[k] === undefined)
      problems.push({ pointer: `${at}/${k}`, message: `is required for ${action}` });
  for (const k of [...spec.required, ...spec.optional]) {
    if (a[k] === undefined) continue;
    const problem = fieldProblem(action, k, a[k], display);
    if (problem !== null) problems.push({ pointer: `${at}/${k}`, message: problem });
  }
  return problems;
}

function fieldProblem(
  action: string,
  field: string,
  v: unknown,
  display: { width: number; height: number },
): string | null {
  switch (field) {
    case 'coordinate':
    case 'start_coordinate':
      return coordinateProblem(v, display);
    case 'text':
      return action === 'key' ? keyProblem(v) : typeProblem(v);
    case 'direction':
      return ['up', 'down', 'left', 'right'].includes(v as string)
        ? null
        : 'must be one of up, down, left, right';
    case 'amount':
      return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_SCROLL_AMOUNT
        ? null
        : `must be a whole number of wheel clicks from 1 to ${MAX_SCROLL_AMOUNT}`;
    case 'duration':
      return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_WAIT_SECONDS
        ? null
        : `must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`;
    default:
      return null;
  }
}

/** Why a value is not a point inside the display, or null. */
function coordinateProblem(v: unknown, display: { width: number; height: number }): string | null {
  if (!Array.isArray(v) || v.length !== 2 || !v.every((n) => Number.isInteger(n)))
    return 'must be [x, y], two whole numbers of pixels';
  const [x, y] = v as [number, number];
  if (x < 0 || y < 0 || x >= display.width || y >= display.height)
    return `is [${x}, ${y}], outside the display (${display.width}×${display.height}): x must be 0–${display.width - 1} and y 0–${display.height - 1}`;
  return null;
}

function typeProblem(v: unknown): string | null {
  if (typeof v !== 'string' || v.length === 0) return 'must be a non-empty string to type';
  if (v.length > MAX_TYPE_CHARACTERS)
    return `is ${v.length} characters; one type action types at most ${MAX_TYPE_CHARACTERS} (split it over several)`;
  if (CONTROL.test(v))
    return 'contains a control character; type types text, tabs and newlines (use key for others, e.g. ctrl+c)';
  return null;
}

function keyProblem(v: unknown): string | null {
  if (typeof v !== 'string' || v.trim().length === 0)
    return 'must name a key or chord, e.g. "Return" or "ctrl+s"';
  if (v.length > MAX_KEY_CHARACTERS)
    return `is ${v.length} characters; at most ${MAX_KEY_CHARACTERS}`;
  const bad = v
    .trim()
    .split(/\s+/)
    .find((chord) => !CHORD.test(chord));
  if (bad !== undefined)
    return `names ${JSON.stringify(bad)}, which is not an X keysym chord: use names such as Return, Tab, ctrl+s, shift+Home, slash (several separated by spaces)`;
  return null;
}
