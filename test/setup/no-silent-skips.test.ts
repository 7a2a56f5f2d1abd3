import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const TEST_ROOT = new URL('..', import.meta.url).pathname;
/** The one place allowed to skip (it fails instead when CI=true), and this file's own examples. */
const EXEMPT = new Set(['helpers/prerequisites.ts', 'setup/no-silent-skips.test.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every way a file could skip a test on its own, with where it is. */
function skipsOutsideThePrerequisites(file: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  // Names bound to a skipWithout(...) result in this file.
  const guarded = new Set(
    [...text.matchAll(/const\s+(\w+)\s*=\s*skipWithout\(/g)].map((m) => m[1]!),
  );
  lines.forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    if (/\b(it|test|describe)\.(skip|todo)\(/.test(line) || /\.todo\(/.test(line))
      found.push(`${at}: an unconditional skip or todo`);
    if (/\b(ctx|context|t)\.skip\(/.test(line)) found.push(`${at}: a skip inside a test`);
    for (const m of line.matchAll(/\.skipIf\(\s*(\S[^)]*)?/g)) {
      // The condition may start on the next line (Prettier breaks long ones).
      const condition = (m[1] ?? lines[i + 1] ?? '').trim();
      const ok =
        condition.startsWith('skipWithout(') || guarded.has(condition.replace(/\W.*$/, ''));
      if (!ok) found.push(`${at}: skipIf(${condition}) is not a skipWithout(...) result`);
    }
  });
  return found;
}

describe('no test skips itself silently', () => {
  const files = sources(TEST_ROOT).filter((f) => !EXEMPT.has(relative(TEST_ROOT, f)));

  it('finds the test files it checks, among them ones that need the machine', () => {
    const names = files.map((f) => relative(TEST_ROOT, f));
    expect(names).toContain('e2e/disk-full.test.ts');
    expect(names).toContain('sandbox/attacks.test.ts');
    expect(names).toContain('studio/studio-approvals.test.ts');
  });

  it('skips only through skipWithout/requireInTest, which fail instead with CI=true', () => {
    const found = files.flatMap((f) =>
      skipsOutsideThePrerequisites(relative(TEST_ROOT, f), readFileSync(f, 'utf8')),
    );
    expect(found).toEqual([]);
  });

  it('catches each way of skipping it looks for', () => {
    const bad = [
      "it.skip('x', () => {});",
      "describe.todo('x');",
      'ctx.skip();',
      "describe.skipIf(!hasBwrap)('x', () => {});",
      "const noBwrap = !hasBwrap;\nit.skipIf(noBwrap)('x', () => {});",
    ];
    for (const text of bad) expect(skipsOutsideThePrerequisites('f.ts', text)).toHaveLength(1);
    const good = [
      "describe.skipIf(skipWithout('bwrap', problem))('x', () => {});",
      "const noBwrap = skipWithout('bwrap', problem);\nit.skipIf(noBwrap)('x', () => {});",
      "describe.skipIf(\n  skipWithout('bwrap', problem),\n)('x', () => {});",
    ];
    for (const text of good) expect(skipsOutsideThePrerequisites('f.ts', text)).toEqual([]);
  });
});
