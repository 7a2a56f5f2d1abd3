import { describe, expect, it } from 'vitest';
import {
  IllegalStateError,
  Lifecycle,
  ResourceLifecycle,
  transition,
} from '../../src/core/index.js';
import type { Transitions } from '../../src/core/index.js';

type Light = 'off' | 'on' | 'broken';
const MOVES: Transitions<Light> = { off: ['on', 'broken'], on: ['off', 'broken'], broken: [] };

describe('transition', () => {
  it('returns the new state for a listed move and refuses any other, naming both states', () => {
    expect(transition('the light', MOVES, 'off', 'on')).toBe('on');
    expect(() => transition('the light', MOVES, 'broken', 'on')).toThrow(IllegalStateError);
    expect(() => transition('the light', MOVES, 'on', 'on')).toThrow(
      'the light cannot move from on to on',
    );
  });
});

describe('Lifecycle', () => {
  it('moves only along the table and keeps its state after a refused move', () => {
    const light = new Lifecycle<Light>('the light', MOVES, 'off');
    light.to('on');
    expect(light.current).toBe('on');
    expect(light.is('off', 'on')).toBe(true);
    light.to('broken');
    expect(() => light.to('off')).toThrow('the light cannot move from broken to off');
    expect(light.current).toBe('broken');
    expect(light.is('off', 'on')).toBe(false);
  });
});

describe('ResourceLifecycle', () => {
  it('is closing from the first close() on, runs the shutdown once, and is closed after it', async () => {
    const r = new ResourceLifecycle('the pool');
    expect(r.isOpen).toBe(true);
    let runs = 0;
    let finish: () => void = () => undefined;
    const shutdown = () => {
      runs += 1;
      return new Promise<void>((ok) => (finish = ok));
    };
    const first = r.close(shutdown);
    expect(r.current).toBe('closing');
    expect(r.isOpen).toBe(false);
    const second = r.close(shutdown);
    expect(second).toBe(first);
    finish();
    await first;
    expect(runs).toBe(1);
    expect(r.current).toBe('closed');
  });

  it('starts created when it waits for a start, and opens only from created', () => {
    const r = new ResourceLifecycle('the service', 'created');
    expect(r.isOpen).toBe(false);
    expect(r.isClosing).toBe(false);
    r.to('open');
    expect(r.isOpen).toBe(true);
    expect(() => r.to('open')).toThrow('the service cannot move from open to open');
    void r.close(() => Promise.resolve());
    expect(r.isClosing).toBe(true);
    expect(() => r.to('open')).toThrow('the service cannot move from closing to open');
  });

  it('is closed after a shutdown that fails, and every close() call sees the failure', async () => {
    const r = new ResourceLifecycle('the pool');
    const first = r.close(() => {
      throw new Error('disk gone');
    });
    await expect(first).rejects.toThrow('disk gone');
    await expect(r.close(() => Promise.resolve())).rejects.toThrow('disk gone');
    expect(r.current).toBe('closed');
  });
});
