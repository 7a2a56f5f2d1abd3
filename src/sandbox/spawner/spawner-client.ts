import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResourceLifecycle } from '../../core/index.js';
import type {
  CallRequest,
  HostCommand,
  LaunchRequest,
  StartRequest,
  PrepareRequest,
  SpawnerEvent,
  SpawnerRequest,
} from './spawner-protocol.js';

/** What the gateway hears of one slot's process. */
export interface SpawnHandlers {
  /** The slot's shell is in its cgroups, waiting for its command. */
  warm(): void;
  failed(message: string): void;
  stdout(data: Buffer): void;
  stderr(data: Buffer): void;
  exit(code: number | null, signal: string | null): void;
  /** What a warm sandbox's stub wrote on its pipe. */
  stub?(text: string): void;
  /** Every stream closed; `status` is what was written to the status pipe. Always the last call. */
  closed(status: string): void;
  /** The spawner died: the slot's processes die with it (--die-with-parent). Always the last call. */
  lost(): void;
}

/**
 * The gateway's end of the spawner process (spawner-main.ts): forks it, sends requests, routes
 * its events to each slot's handlers. If the spawner dies, slots in flight are told `lost` and
 * the next request starts a new one.
 */
export class SpawnerClient {
  private child: ChildProcess | null = null;
  private starting: Promise<ChildProcess> | null = null;
  private readonly slots = new Map<string, SpawnHandlers>();
  /** Host commands sent and not answered, by id. */
  private readonly hostCalls = new Map<
    number,
    (r: { code: number | null; stderr: string }) => void
  >();
  private nextHostId = 0;
  private readonly state = new ResourceLifecycle('the sandbox spawner');

  /**
   * @param cgroupParents the gateway's cgroup parent directories (one per hierarchy): the spawner
   *   empties and removes what is below them if it loses the gateway without `close()`.
   */
  constructor(
    private readonly stateDir: string,
    private readonly cgroupParents: readonly string[] = [],
  ) {}

  /** Starts the spawner now rather than at the first request. */
  async start(): Promise<void> {
    await this.ensure();
  }

  /** Spawns a slot; `handlers` hear what becomes of it. */
  async prepare(req: PrepareRequest, handlers: SpawnHandlers): Promise<void> {
    const child = await this.ensure();
    this.slots.set(req.key, handlers);
    child.send(req);
  }

  /** Starts the sandbox of a prepared slot (ignored if the slot is gone). */
  launch(req: LaunchRequest): void {
    this.send(req);
  }

  /** Starts a warm sandbox's bubblewrap before its call (ignored if the slot is gone). */
  startWarm(req: StartRequest): void {
    this.send(req);
  }

  /** Hands a warm sandbox its call (ignored if the slot is gone). */
  call(req: CallRequest): void {
    this.send(req);
  }

  /**
   * Runs a host command (mount, umount) in the spawner, whose spawns are cheap.
   * @throws Error with the command's stderr when it exits non-zero, cannot be spawned, or the
   *   spawner is lost or closed before it answers (the command may then have run).
   */
  async host(command: HostCommand, args: readonly string[]): Promise<void> {
    const child = await this.ensure();
    if (!child.connected) throw new Error(`${command} was not run: the sandbox spawner exited`);
    const id = ++this.nextHostId;
    const answer = new Promise<{ code: number | null; stderr: string }>((resolve) =>
      this.hostCalls.set(id, resolve),
    );
    child.send({ type: 'host', id, command, args: [...args] } satisfies SpawnerRequest);
    const { code, stderr } = await answer;
    if (code !== 0)
      throw Object.assign(
        new Error(`${command} ${args.join(' ')} failed (${code ?? 'not run'}): ${stderr.trim()}`),
        { stderr },
      );
  }

  /** SIGKILLs the slot's process (the shell, or bubblewrap once exec'd), if it still runs. */
  kill(key: string): void {
    this.send({ type: 'kill', key });
  }

  /** Stops reading the slot's streams (when something outside its cgroup still holds them). */
  release(key: string): void {
    this.send({ type: 'release', key });
  }

  /** Stops the spawner; running sandboxes die with it. Safe to call twice. */
  close(): Promise<void> {
    return this.state.close(async () => {
      const child = this.child ?? (await this.starting?.catch(() => null)) ?? null;
      if (child === null || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // Written before the channel closes, so the spawner knows the disconnect is no loss.
      await new Promise<void>((resolve) => {
        child.send({ type: 'closing' } satisfies SpawnerRequest, () => resolve());
      });
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    });
  }

  private send(req: SpawnerRequest): void {
    if (this.child?.connected) this.child.send(req);
  }

  private ensure(): Promise<ChildProcess> {
    if (!this.state.isOpen) return Promise.reject(new Error('the sandbox is closed'));
    if (this.child !== null) return Promise.resolve(this.child);
    this.starting ??= this.launchSpawner().finally(() => (this.starting = null));
    return this.starting;
  }

  private async launchSpawner(): Promise<ChildProcess> {
    const script = await spawnerScript(this.stateDir);
    const child = fork(script, [JSON.stringify(this.cgroupParents)], {
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      const early = (code: number | null) =>
        reject(new Error(`the sandbox spawner exited (${code}) before it was ready`));
      child.once('exit', early);
      child.once('error', reject);
      child.once('message', () => {
        child.removeListener('exit', early);
        resolve();
      });
    });
    child.on('message', (event: SpawnerEvent) => this.dispatch(event));
    child.once('exit', () => {
      if (this.child === child) this.child = null;
      const lost = [...this.slots.values()];
      this.slots.clear();
      for (const handlers of lost) handlers.lost();
      const unanswered = [...this.hostCalls.values()];
      this.hostCalls.clear();
      for (const answer of unanswered) answer({ code: null, stderr: 'the sandbox spawner exited' });
    });
    this.child = child;
    return child;
  }

  private dispatch(event: SpawnerEvent): void {
    if (event.type === 'ready') return;
    if (event.type === 'host-done') {
      this.hostCalls.get(event.id)?.({ code: event.code, stderr: event.stderr });
      this.hostCalls.delete(event.id);
      return;
    }
    const handlers = this.slots.get(event.key);
    if (handlers === undefined) return;
    switch (event.type) {
      case 'warm':
        handlers.warm();
        return;
      case 'failed':
        handlers.failed(event.message);
        return;
      case 'stdout':
      case 'stderr':
        handlers[event.type](asBuffer(event.data));
        return;
      case 'exit':
        handlers.exit(event.code, event.signal);
        return;
      case 'stub':
        handlers.stub?.(event.text);
        return;
      case 'closed':
        this.slots.delete(event.key);
        handlers.closed(event.status);
        return;
    }
  }
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The spawner's script: the compiled spawner-main.js beside this module; when running from the
 * TypeScript sources (tests), the spawner's three files transpiled into `<stateDir>/spawner/`.
 */
async function spawnerScript(stateDir: string): Promise<string> {
  const compiled = fileURLToPath(new URL('./spawner-main.js', import.meta.url));
  try {
    await access(compiled);
    return compiled;
  } catch {
    // Running from sources.
  }
  const { default: ts } = await import('typescript');
  const dir = join(stateDir, 'spawner');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  for (const name of ['spawner-main', 'spawner-protocol', 'inherited-descriptors']) {
    const source = await readFile(new URL(`./${name}.ts`, import.meta.url), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    await writeFile(join(dir, `${name}.js`), outputText);
  }
  return join(dir, 'spawner-main.js');
}
