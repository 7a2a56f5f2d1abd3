import { execFile } from 'node:child_process';

const SETPRIV = '/usr/bin/setpriv';

/** Whether the setpriv at a path knows `--pdeathsig`, asked once per path (a fact of the host). */
const pdeathsig = new Map<string, Promise<boolean>>();

/**
 * True when the `setpriv` at `path` exists and knows `--pdeathsig` (util-linux 2.33 and later;
 * an older one rejects the option, so nothing behind it would start). Runs `setpriv --help` the
 * first time for a path, off the event loop, and remembers the answer. Never rejects.
 */
export function setprivHasPdeathsig(path: string): Promise<boolean> {
  let known = pdeathsig.get(path);
  if (known === undefined) {
    known = new Promise((resolve) => {
      execFile(path, ['--help'], { encoding: 'utf8', timeout: 5000 }, (err, stdout, stderr) => {
        // An old setpriv may exit non-zero for --help; what it printed still tells.
        const spawned = err === null || typeof (err as { code?: unknown }).code === 'number';
        resolve(spawned && `${stdout}${stderr}`.includes('--pdeathsig'));
      });
    });
    pdeathsig.set(path, known);
  }
  return known;
}

/**
 * The spawn of a stdio server started outside the sandbox: behind `setpriv --pdeathsig KILL`
 * where `setpriv` has it, so the kernel kills the server when Gatehouse dies, even one that
 * ignores the end of its stdin (setpriv execs the server, so the pid stays the server's);
 * otherwise the server itself.
 */
export async function dieWithGateway(
  command: string,
  args: string[],
  setpriv = SETPRIV,
): Promise<{ command: string; args: string[] }> {
  if (!(await setprivHasPdeathsig(setpriv))) return { command, args };
  return { command: setpriv, args: ['--pdeathsig', 'KILL', '--', command, ...args] };
}
