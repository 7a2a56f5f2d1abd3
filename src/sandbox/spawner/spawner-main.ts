/**
 * The spawner: a small Node process, forked once by BwrapSandbox, that spawns the sandboxes'
 * processes and streams their output back over IPC. Spawning from a small process is cheap (the
 * cost of fork grows with the parent's memory, and the gateway's is large).
 *
 * It exits when the gateway goes (IPC disconnect) and kills its children; bubblewrap runs with
 * --die-with-parent, so the sandboxes go with it. When the gateway vanished (no `closing` came
 * first: it was killed, perhaps in the middle of a teardown that froze a cgroup), the spawner also
 * empties the gateway's cgroups itself — thaws them, kills what they hold, removes them — so no
 * frozen cgroup or lone bubblewrap waits for the next start. Imports only Node,
 * spawner-protocol.ts and inherited-descriptors.ts.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { closeInheritedDescriptors } from './inherited-descriptors.js';
import { HOST_COMMANDS, SPAWN_FD } from './spawner-protocol.js';
import type {
  CallRequest,
  HostRequest,
  LaunchRequest,
  StartRequest,
  PrepareRequest,
  SpawnerEvent,
  SpawnerRequest,
} from './spawner-protocol.js';

/** Output chunks handed to IPC but not yet written, before reading pauses. */
const MAX_UNSENT = 16;

interface Slot {
  child: ChildProcess;
  fileCount: number;
}

/** How long the spawner keeps emptying the gateway's cgroups after losing it. */
const REAP_MS = 10_000;

/**
 * The gateway's cgroup parent directories, one per hierarchy (argv[2], JSON): whatever is below
 * them is the gateway's runs, reaped if the gateway vanishes.
 */
// Before anything is spawned: what the gateway inherited and passed on goes no further.
closeInheritedDescriptors();

const cgroupParents = parseParents(process.argv[2]);
/** The gateway said it is closing in order: a disconnect then is no loss. */
let closing = false;

const slots = new Map<string, Slot>();
const paused = new Set<Readable>();
let unsent = 0;

function send(event: SpawnerEvent, done?: () => void): void {
  if (!process.connected) return;
  process.send!(event, undefined, {}, () => done?.());
}

function prepare(req: PrepareRequest): void {
  const failed = (message: string): void => {
    send({ type: 'failed', key: req.key, message });
    send({ type: 'closed', key: req.key, status: '' });
  };
  let seccompFd: number;
  try {
    seccompFd = openSync(req.seccompPath, 'r');
  } catch (err) {
    failed(`cannot open the seccomp filter: ${String(err)}`);
    return;
  }
  const stdio: ('pipe' | number)[] = ['pipe', 'pipe', 'pipe', 'pipe', seccompFd, 'pipe', 'pipe'];
  for (let i = 0; i < req.fileCount; i++) stdio.push('pipe');
  let child: ChildProcess;
  try {
    child = spawn(req.file, req.args, {
      stdio,
      env: {},
      // bubblewrap, pid 1 of the sandbox, keeps this working directory: the sandbox reads it in /proc/1.
      cwd: '/',
      ...(req.uid === null ? {} : { uid: req.uid }),
      ...(req.gid === null ? {} : { gid: req.gid }),
    });
  } catch (err) {
    failed(`cannot spawn ${req.file}: ${String(err)}`);
    return;
  } finally {
    closeSync(seccompFd);
  }
  if (child.pid === undefined) {
    // Spawning failed asynchronously; 'error' follows.
    child.on('error', (err) => failed(`cannot spawn ${req.file}: ${err.message}`));
    return;
  }
  slots.set(req.key, { child, fileCount: req.fileCount });
  for (const stream of child.stdio) (stream as Readable | null)?.on('error', () => {});

  let status = '';
  let warm = false;
  const statusPipe = child.stdio[SPAWN_FD.STATUS] as Readable;
  statusPipe.setEncoding('utf8');
  statusPipe.on('data', (s: string) => {
    status += s;
    if (!warm && status.startsWith('warm\n')) {
      warm = true;
      send({ type: 'warm', key: req.key });
    }
  });
  if (req.stub === true) {
    const stub = (child.stdio as unknown[])[SPAWN_FD.FIRST_FILE] as Readable;
    stub.setEncoding('utf8');
    stub.on('data', (text: string) => send({ type: 'stub', key: req.key, text }));
  }
  forward(req.key, 'stdout', child.stdio[1] as Readable);
  forward(req.key, 'stderr', child.stdio[2] as Readable);
  child.on('exit', (code, signal) => send({ type: 'exit', key: req.key, code, signal }));
  child.on('close', () => {
    slots.delete(req.key);
    send({ type: 'closed', key: req.key, status });
  });
}

function launch(req: LaunchRequest): void {
  const slot = slots.get(req.key);
  if (slot === undefined) return; // it died; the gateway has heard 'closed'
  const pipe = (fd: number) => slot.child.stdio[fd] as Writable;
  for (let i = 0; i < slot.fileCount; i++) pipe(SPAWN_FD.FIRST_FILE + i).end(req.files[i]);
  pipe(SPAWN_FD.OPTIONS).end(req.options);
  pipe(0).end(req.stdin ?? undefined);
  pipe(SPAWN_FD.LINE).end(`${req.line}\n`);
}

/** Starts a warm sandbox's bubblewrap; its stdin and stub pipe stay open for the call. */
function start(req: StartRequest): void {
  const slot = slots.get(req.key);
  if (slot === undefined) return;
  ((slot.child.stdio as unknown[])[SPAWN_FD.OPTIONS] as Writable).end(req.options);
  ((slot.child.stdio as unknown[])[SPAWN_FD.LINE] as Writable).end(`${req.line}\n`);
}

/** Hands a warm sandbox's stub its call, and the program its stdin. */
function call(req: CallRequest): void {
  const slot = slots.get(req.key);
  if (slot === undefined) return; // it died; the gateway has heard 'closed'
  (slot.child.stdio[0] as Writable).end(req.stdin ?? undefined);
  ((slot.child.stdio as unknown[])[SPAWN_FD.FIRST_FILE] as Writable).end(`${req.line}\n`);
}

/** Runs a host command (mount, umount: nothing else) and answers with its code and stderr. */
function host(req: HostRequest): void {
  const file = HOST_COMMANDS[req.command] as string | undefined;
  let answered = false;
  const done = (code: number | null, stderr: string): void => {
    if (answered) return; // 'error' and 'close' may both come
    answered = true;
    send({ type: 'host-done', id: req.id, code, stderr });
  };
  if (file === undefined) {
    done(null, `${String(req.command)} is not a host command the spawner runs`);
    return;
  }
  let stderr = '';
  let child: ChildProcess;
  try {
    child = spawn(file, req.args, { stdio: ['ignore', 'ignore', 'pipe'], env: {}, cwd: '/' });
  } catch (err) {
    done(null, String(err));
    return;
  }
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (s: string) => (stderr += s.slice(0, 4096 - stderr.length)));
  child.on('error', (err) => done(null, err.message));
  child.on('close', (code) => done(code, stderr));
}

/** Sends each chunk as it comes; pauses reading while too many wait to be written to IPC. */
function forward(key: string, type: 'stdout' | 'stderr', stream: Readable): void {
  stream.on('data', (data: Buffer) => {
    unsent++;
    if (unsent >= MAX_UNSENT) {
      stream.pause();
      paused.add(stream);
    }
    send({ type, key, data }, () => {
      unsent--;
      if (unsent < MAX_UNSENT / 2) {
        for (const s of paused) s.resume();
        paused.clear();
      }
    });
  });
}

function handle(req: SpawnerRequest): void {
  switch (req.type) {
    case 'prepare':
      prepare(req);
      return;
    case 'launch':
      launch(req);
      return;
    case 'start':
      start(req);
      return;
    case 'call':
      call(req);
      return;
    case 'host':
      host(req);
      return;
    case 'kill':
      slots.get(req.key)?.child.kill('SIGKILL');
      return;
    case 'release':
      for (const s of slots.get(req.key)?.child.stdio ?? []) (s as Readable | null)?.destroy();
      return;
    case 'closing':
      closing = true;
      return;
  }
}

function parseParents(arg: string | undefined): string[] {
  try {
    const parsed: unknown = JSON.parse(arg ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

function quietly(action: () => void): void {
  try {
    action();
  } catch {
    // Gone already, or not this hierarchy's file.
  }
}

function pidsIn(dir: string): number[] {
  try {
    return readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The gateway's run cgroups now: the directories below its parents. */
function runCgroups(): string[] {
  return cgroupParents.flatMap((parent) => {
    try {
      return readdirSync(parent, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${parent}/${e.name}`);
    } catch {
      return [];
    }
  });
}

/**
 * One pass over `runs`: kills what each holds (cgroup.kill on v2), thaws it (v1 freezer, v2
 * cgroup.freeze: a frozen process dies only once thawed), and removes the empty ones. Returns the
 * ones still there (holding processes, or not yet removable).
 */
function reapPass(runs: readonly string[]): string[] {
  const left: string[] = [];
  for (const dir of runs) {
    quietly(() => writeFileSync(`${dir}/cgroup.kill`, '1'));
    for (const pid of pidsIn(dir)) quietly(() => process.kill(pid, 'SIGKILL'));
    quietly(() => writeFileSync(`${dir}/freezer.state`, 'THAWED'));
    quietly(() => writeFileSync(`${dir}/cgroup.freeze`, '0'));
    // A cgroup whose last process just died may refuse removal for a moment (EBUSY): kept for the
    // next pass, never forgotten.
    if (pidsIn(dir).length > 0 || !removed(dir)) left.push(dir);
  }
  return left;
}

/** Removes an empty cgroup directory; true once it is gone. */
function removed(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * Reaps the gateway's cgroups of the moment it was lost until they are empty and gone, for up to
 * REAP_MS. Only those: a gateway started since on the same state makes cgroups of its own there.
 */
async function reapCgroups(): Promise<void> {
  const deadline = Date.now() + REAP_MS;
  let runs = runCgroups();
  while ((runs = reapPass(runs)).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

process.on('message', (req: SpawnerRequest) => handle(req));
process.on('disconnect', () => {
  for (const slot of slots.values()) slot.child.kill('SIGKILL');
  if (closing) process.exit(0);
  void reapCgroups().finally(() => process.exit(0));
});
send({ type: 'ready' });
