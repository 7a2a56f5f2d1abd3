import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mountTmpfs, unmountAll } from '../../src/sandbox/index.js';
import { mountsAt } from '../../src/sandbox/host-tmpfs.js';
import { skipWithout } from '../helpers/prerequisites.js';

const line = (id: number, point: string) =>
  `${id} 1 0:${id} / ${point} rw,nosuid - tmpfs gatehouse rw,size=1024k`;

describe('mountsAt', () => {
  it('counts the mounts stacked at a path, reading the octal escapes of the table', () => {
    const table = [
      line(30, '/'),
      line(31, '/data/work\\040space'),
      line(32, '/data/work\\040space'),
      line(33, '/data/work'),
      line(34, '/data/work\\134x'),
      '',
    ].join('\n');
    expect(mountsAt(table, '/data/work space')).toBe(2);
    expect(mountsAt(table, '/data/work')).toBe(1);
    expect(mountsAt(table, '/data/work\\x')).toBe(1);
    expect(mountsAt(table, '/data')).toBe(0);
  });
});

describe.skipIf(
  skipWithout('root (to mount)', process.getuid?.() === 0 ? null : 'not running as root'),
)('unmountAll', () => {
  it('removes every tmpfs stacked at a directory with a space in its name, and is safe to repeat', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gatehouse-mounts-'));
    const dir = join(root, 'a dir');
    try {
      execFileSync('mkdir', [dir]);
      for (let i = 0; i < 2; i++)
        await mountTmpfs(dir, {
          source: 'gatehouse-test',
          options: 'size=1m',
          what: 'a test tmpfs',
        });
      expect(mountsAt(readFileSync('/proc/self/mountinfo', 'utf8'), dir)).toBe(2);
      expect(() => execFileSync('mountpoint', ['-q', dir], { stdio: 'ignore' })).not.toThrow();
      await unmountAll(dir);
      expect(() => execFileSync('mountpoint', ['-q', dir], { stdio: 'ignore' })).toThrow();
      await unmountAll(dir);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
