import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CgroupV1 } from '../../src/sandbox/cgroups/cgroup-v1.js';
import { CgroupV2 } from '../../src/sandbox/cgroups/cgroup-v2.js';
import { OptionalControl } from '../../src/sandbox/cgroups/cgroups.js';
import type { SandboxLimits } from '../../src/sandbox/sandbox.js';

// A plain directory stands in for cgroupfs: the test writes the files the kernel would make,
// so what the code asked of the first run and reused for the second is visible.
let base: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'gatehouse-cgroup-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const limits: SandboxLimits = { memoryBytes: 1 << 20, cpus: 1, pids: 8, timeoutMs: 1000 };

function touch(dir: string, ...files: string[]): void {
  for (const f of files) writeFileSync(join(dir, f), '');
}

describe('OptionalControl', () => {
  it('remembers the answer of the first directory that has the proof', () => {
    const control = new OptionalControl('cgroup.kill', 'cgroup.procs');
    const first = join(base, 'a');
    const second = join(base, 'b');
    mkdirSync(first);
    mkdirSync(second);
    touch(first, 'cgroup.procs', 'cgroup.kill');
    expect(control.in(first)).toBe(`${first}/cgroup.kill`);
    // Not asked again: the second directory has no file, yet the tree is known to have it.
    expect(control.in(second)).toBe(`${second}/cgroup.kill`);
  });

  it('remembers absence only where the proof shows the controller is on', () => {
    const control = new OptionalControl('memory.swap.max', 'memory.max');
    const gone = join(base, 'gone');
    expect(control.in(gone)).toBeNull();
    const without = join(base, 'without');
    mkdirSync(without);
    touch(without, 'memory.max');
    expect(control.in(without)).toBeNull();
    // Known absent now: a later directory that has it is not asked.
    const later = join(base, 'later');
    mkdirSync(later);
    touch(later, 'memory.max', 'memory.swap.max');
    expect(control.in(later)).toBeNull();
  });
});

describe('cgroup trees ask once per tree', () => {
  it('v2 sets memory.swap.max on every run once the first run had it', () => {
    const cgroups = new CgroupV2(base, 'gatehouse');
    const first = cgroups.create('r1');
    const dir1 = join(base, 'gatehouse', 'r1');
    touch(dir1, 'memory.max', 'memory.swap.max', 'cgroup.procs');
    first.setLimits(limits);
    expect(readFileSync(join(dir1, 'memory.swap.max'), 'utf8')).toBe('0');
    cgroups.create('r2').setLimits(limits);
    // Written without looking: the file exists only because the answer was remembered.
    expect(readFileSync(join(base, 'gatehouse', 'r2', 'memory.swap.max'), 'utf8')).toBe('0');
  });

  it('v2 leaves memory.swap.max alone on a tree without it, and two trees do not share', () => {
    const without = new CgroupV2(base, 'a');
    const run = without.create('r1');
    touch(join(base, 'a', 'r1'), 'memory.max');
    run.setLimits(limits);
    expect(existsSync(join(base, 'a', 'r1', 'memory.swap.max'))).toBe(false);
    const other = new CgroupV2(base, 'b');
    const r = other.create('r1');
    touch(join(base, 'b', 'r1'), 'memory.max', 'memory.swap.max');
    r.setLimits(limits);
    expect(readFileSync(join(base, 'b', 'r1', 'memory.swap.max'), 'utf8')).toBe('0');
  });

  it('v1 sets memsw on every run once the first run had it, renamed runs included', () => {
    const cgroups = new CgroupV1({ memory: base, cpu: base, pids: base }, 'gatehouse');
    const first = cgroups.create('r1', null);
    touch(join(base, 'gatehouse', 'r1'), 'memory.limit_in_bytes', 'memory.memsw.limit_in_bytes');
    first.setLimits(limits);
    const memsw = (id: string): string =>
      readFileSync(join(base, 'gatehouse', id, 'memory.memsw.limit_in_bytes'), 'utf8');
    expect(memsw('r1')).toBe(String(limits.memoryBytes));
    cgroups.create('r2', null).renameTo('r3').setLimits(limits);
    expect(memsw('r3')).toBe(String(limits.memoryBytes));
  });
});
