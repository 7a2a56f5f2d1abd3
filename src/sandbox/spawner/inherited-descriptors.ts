import { closeSync, readFileSync, readdirSync } from 'node:fs';

/** The close-on-exec bit of an open file's flags, as /proc/self/fdinfo shows them (octal). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes the descriptors this process inherited and would pass on to every child: those from 3 up
 * without close-on-exec (Node and libuv open all of theirs with it), except Node's IPC channel
 * (NODE_CHANNEL_FD). Whoever started the gateway may have left one open (a pipe, a socket, a
 * privileged file); bubblewrap passes what it inherits into the sandbox, so a sandboxed program
 * would hold it. Called first thing by `gatehouse serve` and by the spawner, which start every
 * sandbox. Imports only Node (the spawner's rule). Returns the descriptors closed.
 */
export function closeInheritedDescriptors(): number[] {
  let listed: string[];
  try {
    listed = readdirSync('/proc/self/fd');
  } catch {
    return []; // no /proc: nothing to read the flags from
  }
  const channel = Number(process.env.NODE_CHANNEL_FD ?? -1);
  const closed: number[] = [];
  for (const fd of listed.map(Number)) {
    if (!Number.isInteger(fd) || fd < 3 || fd === channel) continue;
    const flags = descriptorFlags(fd);
    // Gone (the listing's own descriptor) or open for this process's own use: left alone.
    if (flags === null || (flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // closed meanwhile
    }
  }
  return closed;
}

function descriptorFlags(fd: number): number | null {
  try {
    const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return flags ? parseInt(flags[1]!, 8) : null;
  } catch {
    return null;
  }
}
