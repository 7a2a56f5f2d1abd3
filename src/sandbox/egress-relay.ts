import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';

/**
 * The way to the egress proxy of a sandbox that outlives calls (a desktop, a warm browser): a Unix
 * socket of its own, bound into the sandbox where the proxy's socket goes, that passes each
 * connection to the egress endpoint of the call running now (so the decisions are that call's, on
 * its record) and refuses connections between calls. Each call's endpoint closes with the call;
 * this socket stays.
 */
export class EgressRelay {
  private target: string | null = null;
  private readonly open = new Set<Socket>();
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    /** Host path of the relay's socket. */
    readonly path: string,
  ) {}

  /**
   * Listens in a fresh directory under `scratch` (named at random: the sandbox sees the path in
   * its mount table), reachable by `owner` only when given (the sandbox user of a root gateway).
   */
  static async open(
    scratch: string,
    owner: { uid: number; gid: number } | null,
  ): Promise<EgressRelay> {
    const dir = join(scratch, randomBytes(9).toString('base64url'));
    await mkdir(dir, { mode: 0o700 });
    const path = join(dir, 'egress.sock');
    const server = createServer();
    const relay = new EgressRelay(server, dir, path);
    server.on('connection', (socket) => relay.pass(socket));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => resolve());
      });
      await chmod(path, 0o666);
      if (owner) await chown(dir, owner.uid, owner.gid);
      return relay;
    } catch (err) {
      await relay.close();
      throw err;
    }
  }

  /** Where connections go from now on: a call's egress socket, or null (refused) between calls. */
  use(target: string | null): void {
    this.target = target;
    if (target === null) for (const s of this.open) s.destroy();
  }

  /** Stops listening, drops every connection and removes the socket. Safe twice. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.use(null);
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
      await rm(this.dir, { recursive: true, force: true });
    })());
  }

  private pass(socket: Socket): void {
    const target = this.target;
    if (target === null) {
      socket.destroy();
      return;
    }
    const upstream = createConnection(target);
    this.open.add(socket);
    const drop = (): void => {
      this.open.delete(socket);
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    socket.pipe(upstream);
    upstream.pipe(socket);
  }
}
