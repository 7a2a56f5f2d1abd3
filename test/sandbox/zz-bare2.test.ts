import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { afterAll, beforeAll, it } from 'vitest';
import { startSandbox, LIMITS } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';

let f: SandboxFixture;
beforeAll(async () => { f = await startSandbox('bare2'); });
afterAll(async () => { await f.close(); });

function once(file: string, args: string[], seccomp: string, uid: number | undefined, fdAt: number): Promise<number> {
  return new Promise((resolve) => {
    const fd = openSync(seccomp, 'r');
    const t = performance.now();
    const stdio: any[] = ['ignore', 'ignore', 'inherit', 'pipe', 'pipe']; stdio[fdAt] = fd;
    const c = spawn(file, args, { stdio, uid, gid: uid, env: {} });
    closeSync(fd);
    c.on('close', () => resolve(performance.now() - t));
  });
}
async function p50(file: string, args: string[], seccomp: string, uid: number | undefined, fdAt: number) {
  const ts: number[] = [];
  for (let i = 0; i < 30; i++) ts.push(await once(file, args, seccomp, uid, fdAt));
  ts.sort((a, b) => a - b);
  return ts[15]!.toFixed(2);
}
it('bare', async () => {
  const ws = await f.workspace();
  const spec = { id: 'x', argv: ['true'], env: {}, workspace: ws, readOnlyMounts: [], limits: LIMITS, egressSocket: null, onStdout() {}, onStderr() {}, signal: new AbortController().signal };
  const cmd = f.sandbox.bareCommand(spec);
  const s = f.sandbox as any;
  const cg = await s.cgroups.create('zz', LIMITS, { uid: 65534, gid: 65534 });
  const req = s.request(spec, cg, s.cgroups);
  for (let k = 0; k < 2; k++) {
  console.log('bare full', await p50(cmd.file, cmd.args, cmd.seccompPath, 65534, 3));
  console.log('req', await p50(req.file, req.args, cmd.seccompPath, 65534, 4));
  const noCg = [...req.args]; noCg.splice(4, 5);
  console.log('req no cgroup', await p50(req.file, noCg, cmd.seccompPath, 65534, 4));
  }
  await cg.remove();
});
