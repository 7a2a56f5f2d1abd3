import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { EgressRelay } from '../../sandbox/index.js';
import type { ConfinedCommand, RefusedBetweenCalls } from '../../sandbox/index.js';
import type { ConfiningSandbox } from '../browser/index.js';
import { desktopArgv, frameCommand, parseAnswer } from './desktop-driver.js';
import type { DriverAnswer } from './desktop-driver.js';

/** Largest answer line the driver may send (a screenshot, base64): past it the desktop ends. */
const MAX_ANSWER_BYTES = 48 * 1024 * 1024;

/** What a desktop is made of: the lease's sandbox, its display and application. */
export interface DesktopSpec {
  /** The cgroup's (and sandbox's) id: unique while the desktop lives. */
  id: string;
  workspace: string;
  readOnlyMounts: { host: string; sandbox: string }[];
  limits: { memoryBytes: number; cpus: number; pids: number; timeoutMs: number };
  /** The real screen's size (Xvfb's). */
  screen: { width: number; height: number };
  application: readonly string[];
  /**
   * Where the desktop's egress relay socket goes (a directory of the gateway's the sandbox user can
   * pass through) and who may connect to it; null: the desktop has no network at all.
   */
  egress: { scratch: string; owner: { uid: number; gid: number } | null } | null;
}

/**
 * A virtual display and its application in a sandbox of their own (bubblewrap, the lease's
 * cgroup limits, seccomp, the sandbox user, network only through an {@link EgressRelay} to the
 * running call's egress endpoint), driven over the driver's stdin/stdout.
 * Commands run one at a time, inside the sandbox.
 */
export class Desktop {
  private readonly lines: ((line: string | null) => void)[] = [];
  private pending = '';
  private ended = false;
  private closing: Promise<void> | null = null;
  private turn: Promise<unknown> = Promise.resolve();
  private appRunning = true;

  private constructor(
    private readonly child: ChildProcess,
    private readonly command: ConfinedCommand,
    private readonly relay: EgressRelay | null,
  ) {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.take(chunk));
    child.stdout!.on('close', () => this.end());
    child.on('exit', () => this.end());
    child.stdin!.on('error', () => this.end());
    child.stderr!.resume();
  }

  /**
   * Starts the desktop and waits until its display answers and its application was started.
   * @throws Error when the sandbox, Xvfb or the driver does not come up within `timeoutMs`
   *   (then nothing of it is left).
   */
  static async start(
    sandbox: ConfiningSandbox,
    spec: DesktopSpec,
    timeoutMs: number,
  ): Promise<Desktop> {
    const relay = spec.egress
      ? await EgressRelay.open(spec.egress.scratch, spec.egress.owner)
      : null;
    let command: ConfinedCommand;
    try {
      command = await sandbox.confinedCommand({
        id: spec.id,
        argv: desktopArgv(spec.screen, spec.application),
        env: { HOME: '/tmp', LANG: 'C.UTF-8', SHELL: '/bin/sh', TERM: 'xterm' },
        workspace: spec.workspace,
        readOnlyMounts: spec.readOnlyMounts,
        limits: spec.limits,
        egressSocket: relay?.path ?? null,
      });
    } catch (err) {
      await relay?.close();
      throw err;
    }
    let desktop: Desktop | null = null;
    try {
      const fd = openSync(command.seccompPath, 'r');
      let child: ChildProcess;
      try {
        child = spawn(command.file, command.args, {
          env: {},
          // Never the gateway's directory: a sandbox reads its bubblewrap's in /proc/1/cwd.
          cwd: '/',
          stdio: ['pipe', 'pipe', 'pipe', fd, 'pipe'],
          ...(command.user ? { uid: command.user.uid, gid: command.user.gid } : {}),
        });
      } finally {
        closeSync(fd);
      }
      child.on('error', () => undefined);
      (child.stdio[4] as Writable | null)?.on('error', () => undefined).end(command.options);
      desktop = new Desktop(child, command, relay);
      const first = await desktop.nextLine(timeoutMs);
      if (first === null) throw new Error('the desktop sandbox exited before its display was up');
      if (first.startsWith('failed '))
        throw new Error(
          `Xvfb did not start: ${Buffer.from(first.slice(7), 'base64').toString('utf8').trim()}`,
        );
      if (first !== 'ready') throw new Error(`the desktop's driver said ${first.slice(0, 200)}`);
      return desktop;
    } catch (err) {
      if (desktop) await desktop.close();
      else await Promise.all([command.release(), relay?.close()]);
      throw err;
    }
  }

  /** False once the driver, its display or its sandbox is gone. */
  get running(): boolean {
    return !this.ended;
  }

  /**
   * Where the desktop's connections go: the egress endpoint of the call running now (its decisions
   * are that call's), or null between calls (refused).
   */
  useEgress(socketPath: string | null): void {
    this.relay?.use(socketPath);
  }

  /** The connections the desktop tried while no call ran, since the last take (see {@link EgressRelay}). */
  takeRefused(): RefusedBetweenCalls[] {
    return this.relay?.takeRefused() ?? [];
  }

  /** Whether the application still ran at the last command (it may exit, say an xterm's `exit`). */
  get applicationRunning(): boolean {
    return this.appRunning;
  }

  /** Peak memory so far and which limit of the cgroup was hit, if any. */
  usage(): { maxMemoryBytes: number | null; limitHit: string | null } {
    const u = this.command.usage();
    return { maxMemoryBytes: u.maxMemoryBytes, limitHit: u.limitHit };
  }

  /**
   * Runs `argv` inside the sandbox, on the display, after the commands before it.
   * @throws Error when the desktop ended, or did not answer within `timeoutMs` (then it is closed:
   *   what the command did is unknown).
   */
  run(argv: readonly string[], timeoutMs: number): Promise<DriverAnswer> {
    const next = this.turn.then(async () => {
      if (this.ended) throw new Error('the desktop is gone');
      this.child.stdin!.write(frameCommand(argv));
      const line = await this.nextLine(timeoutMs);
      if (line === null) throw new Error('the desktop ended while running a command');
      const answer = parseAnswer(line);
      this.appRunning = answer.applicationRunning;
      return answer;
    });
    this.turn = next.catch(() => undefined);
    return next;
  }

  /** Kills everything in the desktop's cgroup (Xvfb, the application, the driver) and removes it. Safe twice. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.end();
      this.child.kill('SIGKILL');
      await Promise.all([this.command.release(), this.relay?.close()]);
    })());
  }

  /** The next line the driver says; null when it ended. @throws Error after `timeoutMs`. */
  private nextLine(timeoutMs: number): Promise<string | null> {
    return new Promise((resolve, reject) => {
      if (this.ended) return resolve(null);
      const timer = setTimeout(() => {
        const i = this.lines.indexOf(take);
        if (i >= 0) this.lines.splice(i, 1);
        void this.close();
        reject(new Error(`the desktop did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const take = (line: string | null): void => {
        clearTimeout(timer);
        resolve(line);
      };
      this.lines.push(take);
    });
  }

  private take(chunk: string): void {
    this.pending += chunk;
    if (this.pending.length > MAX_ANSWER_BYTES) {
      void this.close();
      return;
    }
    for (let at = this.pending.indexOf('\n'); at >= 0; at = this.pending.indexOf('\n')) {
      const line = this.pending.slice(0, at);
      this.pending = this.pending.slice(at + 1);
      this.lines.shift()?.(line);
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const waiter of this.lines.splice(0)) waiter(null);
  }
}
