import { setTimeout as sleep } from 'node:timers/promises';
import { pngSize } from '../browser/index.js';
import {
  DEFAULT_SCROLL_AMOUNT,
  DEFAULT_WAIT_SECONDS,
  type ComputerStep,
  type Coordinate,
} from './computer-actions.js';
import type { Desktop } from './desktop.js';
import type { DriverAnswer } from './desktop-driver.js';
import { toDisplay, toScreen } from './screen-scale.js';
import type { Size } from './screen-scale.js';

/** Milliseconds between typed characters (xdotool's default, 12, drops none in xterm). */
const TYPE_DELAY_MS = 12;
/** The X buttons of a wheel turned up, down, left, right. */
const WHEEL = { up: 4, down: 5, left: 6, right: 7 } as const;

/** What an action runs against. */
export interface ActionContext {
  desktop: Desktop;
  /** The size the model sees: screenshots have it, the actions' coordinates lie in it. */
  display: Size;
  /** The real screen (Xvfb's): at least the display; coordinates are scaled up to it. */
  screen: Size;
  /** Milliseconds left for the action. */
  timeoutMs: () => number;
  /** Stores a screenshot; undefined where the gateway keeps no artifacts. */
  storeArtifact?: (bytes: Uint8Array) => Promise<string>;
  signal: AbortSignal;
}

/** One action's result on the output. */
export type ActionResult = { action: ComputerStep['action'] } & Record<string, unknown>;

/** An action the desktop ran and refused or failed, with a stable code. */
export class ActionFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ActionFailed';
  }
}

/** Whether an action sends input to the desktop (so an effect may follow), unlike looking or waiting. */
export function sendsInput(step: ComputerStep): boolean {
  return !['screenshot', 'cursor_position', 'wait'].includes(step.action);
}

/**
 * Runs one action on the desktop, inside its sandbox, and says what it did.
 * @throws ActionFailed when xdotool or the screenshot refused; Error when the desktop ended or
 *   did not answer in time.
 */
export async function runAction(step: ComputerStep, c: ActionContext): Promise<ActionResult> {
  switch (step.action) {
    case 'screenshot':
      return { action: 'screenshot', ...(await screenshot(c)) };
    case 'cursor_position': {
      const out = await xdotool(c, ['getmouselocation', '--shell']);
      const x = /^X=(\d+)$/m.exec(out)?.[1];
      const y = /^Y=(\d+)$/m.exec(out)?.[1];
      const real: Coordinate = [Number(x ?? 0), Number(y ?? 0)];
      return { action: 'cursor_position', coordinate: toDisplay(real, c.display, c.screen) };
    }
    case 'mouse_move':
      await xdotool(c, [...moveTo(c, step.coordinate)]);
      return { action: step.action, coordinate: step.coordinate };
    case 'left_click':
    case 'right_click':
      await xdotool(c, [
        ...moveTo(c, step.coordinate),
        'click',
        step.action === 'left_click' ? '1' : '3',
      ]);
      return { action: step.action, coordinate: step.coordinate };
    case 'double_click':
      await xdotool(c, [
        ...moveTo(c, step.coordinate),
        'click',
        '--repeat',
        '2',
        '--delay',
        '80',
        '1',
      ]);
      return { action: step.action, coordinate: step.coordinate };
    case 'left_click_drag': {
      const from = step.start_coordinate === undefined ? [] : moveTo(c, step.start_coordinate);
      await xdotool(c, [...from, 'mousedown', '1', ...moveTo(c, step.coordinate), 'mouseup', '1']);
      return {
        action: step.action,
        ...(step.start_coordinate === undefined ? {} : { start_coordinate: step.start_coordinate }),
        coordinate: step.coordinate,
      };
    }
    case 'type':
      await xdotool(c, ['type', '--delay', String(TYPE_DELAY_MS), '--', step.text]);
      return { action: 'type', characters: step.text.length };
    case 'key': {
      const chords = step.text.trim().split(/\s+/);
      const answer = await c.desktop.run(['xdotool', 'key', '--', ...chords], c.timeoutMs());
      const unknown = /No such key name '([^']*)'/.exec(answer.stderr)?.[1];
      if (unknown !== undefined)
        throw new ActionFailed(
          'UNKNOWN_KEY',
          `key ${JSON.stringify(unknown)} is not an X keysym name (e.g. Return, Tab, Escape, ctrl+s, Page_Down); nothing after it was pressed`,
        );
      check(answer, 'xdotool key');
      return { action: 'key', text: step.text };
    }
    case 'scroll': {
      const amount = step.amount ?? DEFAULT_SCROLL_AMOUNT;
      await xdotool(c, [
        ...moveTo(c, step.coordinate),
        'click',
        '--repeat',
        String(amount),
        '--delay',
        '30',
        String(WHEEL[step.direction]),
      ]);
      return { action: 'scroll', coordinate: step.coordinate, direction: step.direction, amount };
    }
    case 'wait': {
      const seconds = step.duration ?? DEFAULT_WAIT_SECONDS;
      await sleep(Math.min(seconds * 1000, c.timeoutMs()), undefined, { signal: c.signal });
      return { action: 'wait', duration: seconds };
    }
  }
}

/**
 * A PNG of the whole screen scaled to the declared display size, stored as an artifact.
 * @throws ActionFailed when the screenshot tool failed.
 */
export async function screenshot(c: ActionContext): Promise<Record<string, unknown>> {
  const { width, height } = c.display;
  const answer = await c.desktop.run(
    ['import', '-window', 'root', '-resize', `${width}x${height}!`, 'png:-'],
    c.timeoutMs(),
  );
  check(answer, 'the screenshot (import -window root)');
  const png = answer.stdout;
  if (png.length < 24 || png.readUInt32BE(0) !== 0x89504e47)
    throw new ActionFailed('SCREENSHOT_FAILED', 'the screenshot is not a PNG');
  const size = pngSize(png);
  const artifact = c.storeArtifact ? await c.storeArtifact(png) : null;
  return { mediaType: 'image/png', artifact, bytes: png.length, ...size };
}

/** xdotool's words that move the mouse to a point of the declared display (on the real screen). */
function moveTo(c: ActionContext, coordinate: Coordinate): string[] {
  const [x, y] = toScreen(coordinate, c.display, c.screen);
  return ['mousemove', String(x), String(y)];
}

/** Runs xdotool with `args` on the display; its stdout. @throws ActionFailed when it failed. */
async function xdotool(c: ActionContext, args: string[]): Promise<string> {
  const answer = await c.desktop.run(['xdotool', ...args], c.timeoutMs());
  check(answer, `xdotool ${args[0] ?? ''}`);
  return answer.stdout.toString('utf8');
}

function check(answer: DriverAnswer, what: string): void {
  if (answer.status === 0) return;
  const why = answer.stderr.trim().split('\n')[0]?.slice(0, 300) ?? '';
  throw new ActionFailed(
    'ACTION_FAILED',
    `${what} exited with status ${answer.status}${why === '' ? '' : `: ${why}`}`,
  );
}
