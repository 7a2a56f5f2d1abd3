import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { Writable } from 'node:stream';
import { serializeMessage } from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { MessageLines } from './message-lines.js';

/** How to start a stdio server in a prepared process (a sandbox): the exact spawn, nothing added. */
export interface ChildStdioOptions {
  file: string;
  args: string[];
  /** The whole environment of the spawned file (nothing is inherited). */
  env: Record<string, string>;
  /** The child's working directory (undefined: the gateway's). */
  cwd: string | undefined;
  /** Spawn as this host user (null: as the gateway's). */
  user: { uid: number; gid: number } | null;
  /** Open descriptors the child gets from 3 on (e.g. a seccomp filter); the caller closes them. */
  extraFds: number[];
  /**
   * Data the child reads on the descriptors after `extraFds`, each a pipe written and closed at
   * spawn (e.g. bubblewrap's `--args`, so nothing secret is on its command line).
   */
  inputs?: Buffer[];
  /** Largest single message accepted; a bigger one ends the connection. */
  maxBufferSize: number;
  /** Called once the spawn succeeded or failed (the caller closes `extraFds` then). */
  afterSpawn?: () => void;
}

/**
 * An MCP client transport over a child process's stdin and stdout (newline-delimited JSON-RPC, the
 * SDK's own framing), for every stdio upstream: it makes spawns the SDK's StdioClientTransport
 * cannot (another user, extra descriptors, no inherited environment), and it reads a large answer
 * in linear time and memory (see {@link MessageLines}). stderr is a stream of its own for
 * diagnostics.
 */
export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly lines: MessageLines;
  readonly stderr = new PassThrough();

  constructor(private readonly options: ChildStdioOptions) {
    this.lines = new MessageLines(options.maxBufferSize);
  }

  /** The spawned process's id, while it runs. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ChildStdioTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.file, this.options.args, {
        env: this.options.env,
        cwd: this.options.cwd,
        stdio: [
          'pipe',
          'pipe',
          'pipe',
          ...this.options.extraFds,
          ...(this.options.inputs ?? []).map(() => 'pipe' as const),
        ],
        ...(this.options.user ? { uid: this.options.user.uid, gid: this.options.user.gid } : {}),
      });
      this.child = child;
      this.options.afterSpawn?.();
      child.on('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.on('spawn', () => {
        (this.options.inputs ?? []).forEach((data, i) => {
          const pipe = child.stdio[3 + this.options.extraFds.length + i] as Writable | null;
          pipe?.on('error', (err) => this.onerror?.(err));
          pipe?.end(data);
        });
        resolve();
      });
      child.on('close', () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          for (const message of this.lines.append(chunk)) this.onmessage?.(message);
        } catch (err) {
          this.onerror?.(err as Error);
          void this.close();
        }
      });
      child.stderr?.pipe(this.stderr);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin) {
        reject(new Error('Not connected'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends stdin (the server's cue to exit); the caller escalates to signals if it lingers. */
  close(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 2000);
      timer.unref();
      child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      try {
        child.stdin?.end();
      } catch {
        // already closed
      }
    });
  }
}
