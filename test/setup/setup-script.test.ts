import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SETUP = fileURLToPath(new URL('../../scripts/setup.js', import.meta.url));
const LIST = fileURLToPath(new URL('../../scripts/system-packages.json', import.meta.url));

interface Entry {
  package: string;
  provides: { command?: string; file?: string; python?: string };
  for: string;
}

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-setup-'));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `npm run setup --system-only` on `packages`, as an unprivileged user. */
function setup(packages: Entry[]) {
  const file = join(dir, `list-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ packages }));
  chmodSync(file, 0o644);
  return spawnSync(process.execPath, [SETUP, '--system-only'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GATEHOUSE_SETUP_PACKAGES: file },
    ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
  });
}

describe('npm run setup', () => {
  it('lists every system package with one check and a reason', () => {
    const list = JSON.parse(readFileSync(LIST, 'utf8')) as { packages: Entry[] };
    const names = list.packages.map((p) => p.package);
    for (const needed of [
      'bubblewrap',
      'socat',
      'python3-seccomp',
      'git',
      'postgresql',
      'chromium',
      'xvfb',
      'xdotool',
      'imagemagick',
      'xterm',
    ]) {
      expect(names).toContain(needed);
    }
    for (const p of list.packages) {
      expect(Object.keys(p.provides), p.package).toHaveLength(1);
      expect(['command', 'file', 'python']).toContain(Object.keys(p.provides)[0]);
      expect(p.for.length, p.package).toBeGreaterThan(0);
    }
  });

  it('says so and succeeds when every package is present', () => {
    const r = setup([
      { package: 'dash', provides: { command: 'sh' }, for: 'a shell' },
      { package: 'coreutils', provides: { file: '/usr/*/env' }, for: 'env' },
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('the 2 system packages are present');
    expect(r.status).toBe(0);
  });

  it('without root, prints the exact apt-get command for the missing packages and fails', () => {
    const r = setup([
      { package: 'dash', provides: { command: 'sh' }, for: 'a shell' },
      { package: 'gatehouse-nonesuch', provides: { command: 'gatehouse-nonesuch' }, for: 'x' },
      { package: 'gatehouse-nofile', provides: { file: '/usr/lib/*/nonesuch' }, for: 'y' },
    ]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('missing gatehouse-nonesuch (x)');
    expect(r.stdout).not.toContain('missing dash');
    expect(r.stderr).toContain(
      'sudo apt-get update && sudo apt-get install -y gatehouse-nonesuch gatehouse-nofile',
    );
  });
});
