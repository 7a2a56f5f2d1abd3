import { readFileSync, readdirSync } from 'node:fs';

/** A process, by pid and start time (so a reused pid is not mistaken for it). */
export interface Proc {
  pid: number;
  start: string;
  cmdline: string;
}

function stat(pid: number): { ppid: number; start: string; state: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0]!, ppid: Number(rest[1]), start: rest[19]! };
  } catch {
    return undefined;
  }
}

/** `root` and every process descended from it. */
export function processTree(root: number): Proc[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), Number(entry)]);
  }
  const out: Proc[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const s = stat(pid);
    if (!s) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      // gone meanwhile
    }
    out.push({ pid, start: s.start, cmdline });
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Whether the very process `p` (not a later one with its pid) still runs (zombies do not). */
export function alive(p: Proc): boolean {
  const s = stat(p.pid);
  return s !== undefined && s.start === p.start && s.state !== 'Z';
}
