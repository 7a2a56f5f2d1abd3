import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { bundleBudget } from '../../studio/bundle-budget.js';

type Hook = (this: { error: (m: string) => never }, o: unknown, b: unknown) => void;

/** Runs the plugin's hook on a fake bundle; returns what it printed, or throws its error. */
function run(budget: number, bundle: Record<string, unknown>): string {
  const hook = bundleBudget(budget).generateBundle as unknown as Hook;
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    hook.call(
      {
        error: (m: string) => {
          throw new Error(m);
        },
      },
      {},
      bundle,
    );
    return log.mock.calls.map((c) => String(c[0])).join('\n');
  } finally {
    log.mockRestore();
  }
}

/** Text that gzip cannot shrink much: `n` random bytes, base64. */
const noise = (n: number) => randomBytes(n).toString('base64');

describe("the Studio build's first-view budget", () => {
  it("prints the gzip size of the scripts and styles, not other files'", () => {
    const out = run(150 * 1024, {
      'a.js': { type: 'chunk', fileName: 'assets/a.js', code: noise(4096) },
      'a.css': { type: 'asset', fileName: 'assets/a.css', source: 'body{}' },
      'big.png': { type: 'asset', fileName: 'big.png', source: noise(400_000) },
    });
    const kb = Number(/first view: ([\d.]+) KB gzipped \(budget 150 KB\)/.exec(out)?.[1]);
    expect(kb).toBeGreaterThan(1);
    expect(kb).toBeLessThan(10);
  });

  it('fails the build above the budget, saying so', () => {
    expect(() =>
      run(1024, { 'a.js': { type: 'chunk', fileName: 'assets/a.js', code: noise(8192) } }),
    ).toThrow(/budget 1 KB\): over budget/);
  });
});
