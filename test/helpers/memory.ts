import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Runs a full garbage collection (V8's gc(), made reachable for this process), so collected
 * garbage is not counted as memory growth.
 */
export async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Twice, a turn apart: buffers whose memory is freed by a callback go in the second.
  gc();
  await new Promise((ok) => setImmediate(ok));
  gc();
}
