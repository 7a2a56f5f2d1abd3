import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { afterAll, beforeAll, it } from 'vitest';
import { startSandbox, LIMITS } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';

let f: SandboxFixture;
beforeAll(async () => { f = await startSandbox('bare'); });
afterAll(async () => { await f.close(); });

function once(file: string, args: string[], seccomp: string, uid: number | undefined): Promise<number> {
  return new Promise((resolve) => {
    const fd = openSync(seccomp, 'r');
    const t = performance.now();
    const c = spawn(file, args, { stdio: ['ignore', 'ignore', 'inherit', fd], uid, gid: uid, env: {} });
    closeSync(fd);
    c.on('close', () => resolve(performance.now() - t));
  });
}
async function p50(file: string, args: string[], seccomp: string, uid?: number) {
  const ts: number[] = [];
  for (let i = 0; i < 20; i++) ts.push(await once(file, args, seccomp, uid));
  ts.sort((a, b) => a - b);
  return ts[10]!.toFixed(2);
}
it('bare', async () => {
  const ws = await f.workspace();
  const cmd = f.sandbox.bareCommand({ id: 'x', argv: ['true'], env: {}, workspace: ws, readOnlyMounts: [], limits: LIMITS, egressSocket: null, onStdout() {}, onStderr() {}, signal: new AbortController().signal });
  console.log(cmd.args.join(' '));
  console.log('bare full', await p50(cmd.file, cmd.args, cmd.seccompPath, 65534));
  const noEtc = cmd.args.filter((a, i, arr) => !(a.startsWith('/etc/') || (a === '--ro-bind-try' && arr[i + 1]?.startsWith('/etc/'))));
  console.log('bare no etc', await p50(cmd.file, noEtc, cmd.seccompPath, 65534));
  console.log('sh true', await p50('/bin/sh', ['-c', 'true'], cmd.seccompPath, 65534));
});
