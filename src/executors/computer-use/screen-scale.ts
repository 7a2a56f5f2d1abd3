/** A point in whole pixels from the top-left corner. */
type Point = [number, number];

/** A size in whole pixels. */
export interface Size {
  width: number;
  height: number;
}

/**
 * The point of the real screen under a point of the declared display: the centre of the screen
 * pixels the display pixel stands for (the same point when the two are one size).
 */
export function toScreen([x, y]: Point, display: Size, screen: Size): Point {
  return [scaleUp(x, display.width, screen.width), scaleUp(y, display.height, screen.height)];
}

/** The point of the declared display that shows a point of the real screen. */
export function toDisplay([x, y]: Point, display: Size, screen: Size): Point {
  return [scaleDown(x, display.width, screen.width), scaleDown(y, display.height, screen.height)];
}

function scaleUp(v: number, declared: number, real: number): number {
  return Math.min(real - 1, Math.floor(((v + 0.5) * real) / declared));
}

function scaleDown(v: number, declared: number, real: number): number {
  return Math.max(0, Math.min(declared - 1, Math.floor((v * declared) / real)));
}
