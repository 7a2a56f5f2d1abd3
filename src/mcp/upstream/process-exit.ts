/** True while a process with this id exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Waits for a process that was just told to end (its stdin closed) to exit, sending SIGTERM after
 * 250 ms and SIGKILL after 1.5 s while it is still there; gives up waiting after 5 s. Never throws.
 */
export async function escalateExit(pid: number): Promise<void> {
  const exited = waitForExit(pid, 5000);
  const term = setTimeout(() => signal(pid, 'SIGTERM'), 250);
  const kill = setTimeout(() => signal(pid, 'SIGKILL'), 1500);
  await exited;
  clearTimeout(term);
  clearTimeout(kill);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

async function waitForExit(pid: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  while (processAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
