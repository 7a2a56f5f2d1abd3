import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { sh, startSandbox } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';

const fixture = await startSandbox('writable');

describe.skipIf(
  skipWithout('the Linux sandbox (bubblewrap, seccomp, cgroups)', fixture.unavailable),
)('writable mounts of a sandbox run', () => {
  const f: SandboxFixture = fixture;
  afterAll(() => f.close());

  it('binds a writable mount read-write at its path, over a read-only mount of the same path', async () => {
    const dir = await f.workspace();
    const readOnly = await sh(f, `echo no >${dir}/ro.txt`, {
      readOnlyMounts: [{ host: dir, sandbox: dir }],
    });
    expect(readOnly.result.exitCode).not.toBe(0);
    expect(readOnly.stderr).toMatch(/Read-only file system/);
    expect(existsSync(`${dir}/ro.txt`)).toBe(false);

    const writable = await sh(f, `echo yes >${dir}/rw.txt`, {
      readOnlyMounts: [{ host: dir, sandbox: dir }],
      writableMounts: [{ host: dir, sandbox: dir }],
    });
    expect(writable.result.exitCode, writable.stderr).toBe(0);
    expect(readFileSync(`${dir}/rw.txt`, 'utf8')).toBe('yes\n');
  });

  it('refuses a writable mount over a system directory or the workspace, naming it', async () => {
    for (const [sandbox, field] of [
      ['/usr/lib', 'writableMounts[0].sandbox'],
      ['/workspace', 'writableMounts[0].sandbox'],
      ['/', 'writableMounts[0].sandbox'],
      ['relative', 'writableMounts[0].host'],
    ] as const) {
      const host = sandbox === 'relative' ? 'relative' : await f.workspace();
      let err: unknown;
      try {
        await sh(f, 'true', { writableMounts: [{ host, sandbox }] });
      } catch (e) {
        err = e;
      }
      expect(isGatehouseError(err) && err.code, sandbox).toBe('INVALID_INPUT');
      expect((err as { details: unknown }).details).toEqual({ field });
    }
  });
});
