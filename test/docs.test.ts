import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every folder under `dir`, as `src/a/b/` paths relative to the repository. */
function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => {
      const path = join(dir, e.name);
      return [`${relative(ROOT, path)}/`, ...folders(path)];
    });
}

/** The folders the code map of docs/architecture.md names (under src/ and studio/src/). */
function codeMap(): string[] {
  const text = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = text.split(/^## Code map$/m)[1]?.split(/^## /m)[0] ?? '';
  return [...section.matchAll(/^\|\s*`((?:studio\/)?src\/[^`]*)`\s*\|/gm)].map((m) => m[1]!);
}

describe('docs', () => {
  it('the code map in docs/architecture.md names exactly the folders of src/ and studio/src/', () => {
    const named = codeMap();
    expect(named.length, 'the code map table was found').toBeGreaterThan(10);
    expect(new Set(named).size, 'each folder once').toBe(named.length);
    const tree = [
      ...folders(join(ROOT, 'src')),
      'studio/src/',
      ...folders(join(ROOT, 'studio', 'src')),
    ];
    expect(
      tree.filter((f) => !named.includes(f)),
      'folders of src/ and studio/src/ the code map leaves out',
    ).toEqual([]);
    expect(
      named.filter((f) => !tree.includes(f)),
      'folders the code map names that do not exist',
    ).toEqual([]);
  });

  it('the repository stands alone: nothing names the shared folder outside it', () => {
    const outside = ['..', 'shared'].join('/');
    const offenders: string[] = [];
    const scan = (path: string): void => {
      if (!existsSync(path)) return;
      const entries = readdirSync(path, { withFileTypes: true });
      for (const e of entries) {
        const p = join(path, e.name);
        if (e.isDirectory()) scan(p);
        else if (readFileSync(p, 'utf8').includes(outside)) offenders.push(relative(ROOT, p));
      }
    };
    for (const dir of ['src', 'studio', 'test', 'docs', 'bench', 'scripts', 'examples', '.ci']) {
      scan(join(ROOT, dir));
    }
    for (const file of ['README.md', 'package.json', 'vitest.config.ts', 'eslint.config.js']) {
      if (readFileSync(join(ROOT, file), 'utf8').includes(outside)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
