// Shared by the scripts that drive a real gateway (chaos.js, docs-screenshots.js).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { clearTimeout, setTimeout } from 'node:timers';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/**
 * Starts `gatehouse serve --demo` (the build's) on `dataDir` on a free port, with no GATEHOUSE_*
 * setting of this environment, and waits up to 180 s for it to listen.
 * @param {string} dataDir
 * @returns {Promise<{child: import('node:child_process').ChildProcess, url: string, exited: Promise<void>}>}
 */
export function startDemoGateway(dataDir) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')),
  );
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--demo', '--data', dataDir, '--port', '0'],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((resolve) => child.once('exit', () => resolve(undefined)));
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the gateway did not start in 180 s:\n${out}`));
    }, 180_000);
    child.stdout.on('data', (d) => {
      out += String(d);
      const m = /Gatehouse listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: m[1], exited });
      }
    });
    child.stderr.on('data', (d) => (out += String(d)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${code ?? signal}) before listening:\n${out}`));
    });
  });
}
