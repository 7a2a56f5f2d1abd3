import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from '../helpers/cli.js';

const SANDBOX = fileURLToPath(new URL('../../dist/sandbox/index.js', import.meta.url));

// Node marks the low descriptors it inherits close-on-exec itself (3 to about 19); these are not.
const [FD_A, FD_B] = [40, 41];

/**
 * Runs `script` (an ES module body) in a fresh Node process that inherits two open pipes as
 * descriptors FD_A and FD_B, as a careless parent would leave them; resolves with what it printed.
 */
function withInheritedPipes(script: string): Promise<string> {
  const stdio: ('ignore' | 'pipe' | 'inherit')[] = ['ignore', 'pipe', 'inherit'];
  for (let fd = 3; fd <= FD_B; fd++) stdio.push(fd === FD_A || fd === FD_B ? 'pipe' : 'ignore');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio });
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  for (const fd of [FD_A, FD_B]) (child.stdio[fd] as NodeJS.ReadableStream).on('error', () => {});
  return new Promise((resolve) => child.on('close', () => resolve(stdout)));
}

/** The script's line printing which of FD_A and FD_B it still holds, and their flags. */
const HELD = `
  const { readdirSync, readFileSync } = await import('node:fs');
  const held = readdirSync('/proc/self/fd').map(Number).filter((fd) => fd === ${FD_A} || fd === ${FD_B});
  const cloexec = held.map((fd) => (parseInt(/flags:\\s+([0-7]+)/.exec(readFileSync('/proc/self/fdinfo/' + fd, 'utf8'))[1], 8) & 0o2000000) !== 0);
`;

describe('closeInheritedDescriptors', () => {
  beforeAll(() => ensureBuilt());

  it('closes what the process inherited open, and nothing of its own', async () => {
    const out = await withInheritedPipes(`
      const { closeInheritedDescriptors } = await import(${JSON.stringify(SANDBOX)});
      const closed = closeInheritedDescriptors().filter((fd) => fd === ${FD_A} || fd === ${FD_B});
      // The event loop, timers, files and children of its own still work after it.
      await new Promise((r) => setTimeout(r, 100));
      await (await import('node:fs/promises')).readFile('/proc/self/status');
      const { execFileSync } = await import('node:child_process');
      const child = execFileSync('/bin/sh', ['-c', 'ls /proc/self/fd'], { encoding: 'utf8' });
      ${HELD}
      process.stdout.write(JSON.stringify({ closed, held, child: child.split('\\n').filter(Boolean).map(Number).filter((fd) => fd > 2) }));
    `);
    const seen = JSON.parse(out) as { closed: number[]; held: number[]; child: number[] };
    expect(seen.closed).toEqual([FD_A, FD_B]);
    expect(seen.held).toEqual([]);
    // A child gets nothing past its standard three (ls's own listing descriptor aside).
    expect(seen.child.filter((fd) => fd === FD_A || fd === FD_B)).toEqual([]);
  });

  it('is needed: without it the process holds them open and passes them on', async () => {
    const out = await withInheritedPipes(`
      ${HELD}
      process.stdout.write(JSON.stringify({ held, cloexec }));
    `);
    expect(JSON.parse(out)).toEqual({ held: [FD_A, FD_B], cloexec: [false, false] });
  });
});

describe('gatehouse serve', () => {
  beforeAll(() => ensureBuilt());

  it('holds no descriptor it was started with past its standard three', async () => {
    const data = mkdtempSync(join(tmpdir(), 'gatehouse-fds-'));
    const stdio: ('ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe'];
    for (let fd = 3; fd <= FD_B; fd++) stdio.push(fd === FD_A || fd === FD_B ? 'pipe' : 'ignore');
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')),
    );
    const child = spawn(process.execPath, [CLI, 'serve', '--data', data, '--port', '0'], {
      stdio,
      env: { ...env, GATEHOUSE_DB: `sqlite:${join(data, 'g.db')}` },
    });
    for (const fd of [FD_A, FD_B]) (child.stdio[fd] as NodeJS.ReadableStream).on('error', () => {});
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('listening on')) resolve();
        });
        child.on('error', reject);
        child.on('exit', (code) => reject(new Error(`serve exited ${String(code)}: ${out}`)));
      });
      const held = readdirSync(`/proc/${child.pid}/fd`).map(Number);
      expect(held.filter((fd) => fd === FD_A || fd === FD_B)).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
      rmSync(data, { recursive: true, force: true });
    }
  });
});
