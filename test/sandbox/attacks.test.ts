import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_ID_INSIDE } from '../../src/sandbox/index.js';
import { LIMITS, SANDBOX_USER, hostProcesses, run, sh, startSandbox } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';

const fixture = await startSandbox('attacks');
const PY = '/usr/bin/python3';

/**
 * Each attack of issue 4's list, tried from inside a real sandbox: every one must be refused or
 * contained, and the result must say so.
 */
describe.skipIf(
  skipWithout('the Linux sandbox (bubblewrap, seccomp, cgroups)', fixture.unavailable),
)('attacks on the sandbox', () => {
  const f: SandboxFixture = fixture;
  afterAll(() => f.close());

  describe('the filesystem', () => {
    it('refuses writes outside /workspace; /tmp is private and starts empty', async () => {
      const mark = `gatehouse-mine-${process.pid}-${Date.now()}`;
      const { stdout } = await sh(
        f,
        [
          'for p in /x /usr/x /etc/x /bin/x /run/x /proc/x; do',
          '  (echo pwned > $p) 2>/dev/null && echo "wrote $p" || echo "refused $p"',
          'done',
          'echo "tmp:$(ls -A /tmp)"',
          `echo mine > /tmp/${mark} && echo tmp-writable`,
        ].join('\n'),
      );
      expect(stdout).toBe(
        [
          ...['/x', '/usr/x', '/etc/x', '/bin/x', '/run/x', '/proc/x'].map((p) => `refused ${p}`),
          'tmp:',
          'tmp-writable',
          '',
        ].join('\n'),
      );
      // Another run does not see the first one's /tmp.
      expect((await sh(f, 'ls -A /tmp')).stdout).toBe('');
      // Nor does the host (a name of this run's, so no host file can be mistaken for it).
      expect(existsSync(`/tmp/${mark}`)).toBe(false);
    });

    it("cannot read the gateway's data, or another run's workspace", async () => {
      const dataDir = await f.privateDir();
      await writeFile(join(dataDir, 'master.key'), 'gateway-master-key');
      const other = await f.workspace();
      await writeFile(join(other, 'secret.txt'), 'other-lease-secret');
      await chmod(join(other, 'secret.txt'), 0o644);
      const otherRun = sh(f, 'sleep 2', { workspace: other });
      const { stdout, stderr } = await sh(
        f,
        [
          `cat ${dataDir}/master.key`,
          `cat ${other}/secret.txt`,
          `ls ${dataDir} ${other}`,
          'cat /proc/*/root/workspace/secret.txt',
          'ls /',
        ].join('; '),
      );
      await otherRun;
      expect(stdout + stderr).not.toContain('gateway-master-key');
      expect(stdout + stderr).not.toContain('other-lease-secret');
      expect(stdout.trim().split('\n').sort()).toEqual(
        ['bin', 'dev', 'etc', 'lib', 'lib64', 'proc', 'sbin', 'tmp', 'usr', 'workspace'].filter(
          (d) => d !== 'lib64' || existsSync('/lib64'),
        ),
      );
    });

    it('follows no symlink or hardlink out of the workspace', async () => {
      const outside = await f.privateDir();
      await writeFile(join(outside, 'host.txt'), 'host-only');
      await chmod(outside, 0o755);
      await chmod(join(outside, 'host.txt'), 0o644);
      const workspace = await f.workspace();
      const { stdout, stderr } = await sh(
        f,
        [
          'ln -s /etc/shadow shadow; cat shadow || echo no-shadow',
          `ln -s ${outside}/host.txt host; cat host || echo no-host-file`,
          'ln /etc/passwd hard 2>/dev/null && echo hardlinked || echo no-hardlink',
          'ln /usr/bin/su su-copy 2>/dev/null && echo hardlinked-su || echo no-hardlink-su',
        ].join('\n'),
        { workspace },
      );
      expect(stdout).toBe('no-shadow\nno-host-file\nno-hardlink\nno-hardlink-su\n');
      expect(stderr).not.toContain('host-only');
    });

    it('makes fifos only where it may write, and no device nodes', async () => {
      const { stdout } = await sh(
        f,
        [
          'mkfifo ./pipe && echo fifo-in-workspace',
          'mkfifo /usr/pipe 2>/dev/null || echo no-fifo-in-usr',
          'mkfifo /pipe 2>/dev/null || echo no-fifo-in-root',
          'mknod ./null c 1 3 2>/dev/null || echo no-char-device',
          'mknod ./disk b 8 0 2>/dev/null || echo no-block-device',
        ].join('\n'),
      );
      expect(stdout).toBe(
        'fifo-in-workspace\nno-fifo-in-usr\nno-fifo-in-root\nno-char-device\nno-block-device\n',
      );
    });
  });

  describe('privileges', () => {
    it('runs unprivileged: not root, no capabilities, no new privileges, seccomp on', async () => {
      const { stdout } = await sh(
        f,
        'id -u; id -g; grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status',
      );
      const lines = stdout.trim().split('\n');
      expect(lines[0]).not.toBe('0');
      expect(lines[1]).not.toBe('0');
      expect(lines.slice(2)).toEqual([
        'CapInh:\t0000000000000000',
        'CapPrm:\t0000000000000000',
        'CapEff:\t0000000000000000',
        'CapBnd:\t0000000000000000',
        'CapAmb:\t0000000000000000',
        'NoNewPrivs:\t1',
        'Seccomp:\t2',
      ]);
    });

    it('is not root on the host either: it cannot write /proc/sys or /proc/sysrq-trigger', async () => {
      const { stdout } = await sh(
        f,
        [
          // Writes back the current value, so nothing changes even if this test ever fails.
          'v=$(cat /proc/sys/kernel/core_uses_pid)',
          '(echo "$v" > /proc/sys/kernel/core_uses_pid) 2>/dev/null && echo wrote-sysctl || echo no-sysctl',
          '(: > /proc/sysrq-trigger) 2>/dev/null && echo opened-sysrq || echo no-sysrq',
        ].join('\n'),
      );
      expect(stdout).toBe('no-sysctl\nno-sysrq\n');
    });

    it('gains nothing from setuid binaries or sudo', async () => {
      const workspace = await f.workspace();
      const { stdout } = await sh(
        f,
        [
          // A setuid-root binary of the host (su, or passwd), if it has one, is useless here.
          'for b in /usr/bin/su /usr/bin/passwd; do test -u $b && { echo "setuid $b"; break; }; done',
          "/usr/bin/su -c 'id -u' root </dev/null 2>/dev/null; echo su-exit=$?",
          'sudo id -u 2>/dev/null; echo sudo-exit=$?',
          'cp /usr/bin/id ./myid && chmod u+s ./myid && ./myid -u',
        ].join('\n'),
        { workspace },
      );
      const lines = stdout.trim().split('\n');
      if (existsSync('/usr/bin/su')) expect(lines).toContain('setuid /usr/bin/su');
      expect(lines).toContainEqual(expect.stringMatching(/^su-exit=[1-9]/));
      expect(lines).toContainEqual(expect.stringMatching(/^sudo-exit=[1-9]/));
      expect(lines.at(-1)).toBe(String(SANDBOX_ID_INSIDE));
      expect(stdout).not.toMatch(/^0$/m);
      // The setuid file the sandbox made belongs to the unprivileged host user, not root.
      const made = await stat(join(workspace, 'myid'));
      expect(made.uid).toBe(SANDBOX_USER.uid);
    });

    it('cannot ptrace, make namespaces or change personality', async () => {
      const { stdout } = await run(f, [
        PY,
        '-c',
        [
          'import ctypes, os',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'r = libc.ptrace(0, 0, 0, 0)',
          'print("ptrace", r, os.strerror(ctypes.get_errno()))',
          'r = libc.unshare(0x10000000)',
          'print("unshare-user", r, os.strerror(ctypes.get_errno()))',
          'r = libc.unshare(0x40000000)',
          'print("unshare-net", r, os.strerror(ctypes.get_errno()))',
          'r = libc.personality(0x0040000)',
          'print("personality", r, os.strerror(ctypes.get_errno()))',
        ].join('\n'),
      ]);
      expect(stdout).toBe(
        [
          'ptrace -1 Operation not permitted',
          'unshare-user -1 Operation not permitted',
          'unshare-net -1 Operation not permitted',
          'personality -1 Operation not permitted',
          '',
        ].join('\n'),
      );
      if (existsSync('/usr/bin/strace')) {
        const strace = await run(f, ['/usr/bin/strace', '-f', 'true']);
        expect(strace.result.exitCode).not.toBe(0);
      }
    });
  });

  describe('the network', () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    beforeAll(async () => {
      server = createServer((s) => {
        connections++;
        s.end('host-service\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("cannot reach the host's loopback or anything else", async () => {
      const connectTo = (host: string) =>
        `${PY} -c 'import socket; socket.create_connection(("${host}", ${port}), timeout=3)' 2>/dev/null`;
      const { stdout } = await sh(
        f,
        [
          `bash -c 'echo hi > /dev/tcp/127.0.0.1/${port}' 2>/dev/null && echo bash-connected || echo bash-refused`,
          `${connectTo('127.0.0.1')} && echo python-connected || echo python-refused`,
          `${connectTo('1.1.1.1')} && echo internet || echo no-internet`,
          'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "',
        ].join('\n'),
      );
      expect(stdout).toBe('bash-refused\npython-refused\nno-internet\nlo\n');
      expect(connections).toBe(0);
    });

    it('gets EPERM for UDP, raw, packet and netlink sockets', async () => {
      const { stdout } = await run(f, [
        PY,
        '-c',
        [
          'import socket',
          'for name, args in [',
          '  ("udp", (socket.AF_INET, socket.SOCK_DGRAM)),',
          '  ("udp6", (socket.AF_INET6, socket.SOCK_DGRAM)),',
          '  ("raw", (socket.AF_INET, socket.SOCK_RAW, 1)),',
          '  ("packet", (socket.AF_PACKET, socket.SOCK_RAW)),',
          '  ("netlink", (socket.AF_NETLINK, socket.SOCK_RAW, 0)),',
          '  ("sctp", (socket.AF_INET, socket.SOCK_STREAM, 132)),',
          '  ("tcp", (socket.AF_INET, socket.SOCK_STREAM)),',
          '  ("unix", (socket.AF_UNIX, socket.SOCK_STREAM)),',
          ']:',
          '  try:',
          '    socket.socket(*args).close(); print(name, "allowed")',
          '  except OSError as e:',
          '    print(name, e.strerror)',
        ].join('\n'),
      ]);
      expect(stdout).toBe(
        [
          'udp Operation not permitted',
          'udp6 Operation not permitted',
          'raw Operation not permitted',
          'packet Operation not permitted',
          'netlink Operation not permitted',
          'sctp Operation not permitted',
          'tcp allowed',
          'unix allowed',
          '',
        ].join('\n'),
      );
    });
  });

  describe('limits', () => {
    it('contains a fork bomb with the pids limit', async () => {
      const id = `forkbomb-${process.pid}`;
      const { result, stderr } = await run(f, ['/bin/bash', '-c', ':(){ :|:& };: ; sleep 2'], {
        id,
        limits: { ...LIMITS, pids: 32, timeoutMs: 10_000 },
      });
      expect(result.killed).toBe('pids');
      expect(stderr).toMatch(/fork|resource/i);
      expect(existsSync(`/sys/fs/cgroup/pids/${f.cgroupParent}/${id}`)).toBe(false);
      // The host still forks.
      expect(spawnSync('/bin/true').status).toBe(0);
      expect((await sh(f, 'echo after')).stdout).toBe('after\n');
    });

    it('kills a memory hog at the memory limit', async () => {
      const { result } = await run(f, [PY, '-c', 'a = b"x" * (500 * 2**20); print(len(a))'], {
        limits: { ...LIMITS, memoryBytes: 64 * 2 ** 20 },
      });
      expect(result.killed).toBe('memory');
      expect(result.exitCode).not.toBe(0);
      expect(result.usage.maxMemoryBytes).toBeLessThanOrEqual(64 * 2 ** 20);
    });

    it('streams 100 MB of output without the gateway holding it', async () => {
      let bytes = 0;
      let peak = 0;
      globalThis.gc?.();
      const before = process.memoryUsage().rss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss - before);
      }, 10);
      try {
        const { result } = await run(f, ['/usr/bin/head', '-c', '100000000', '/dev/zero'], {
          onStdout: (chunk) => (bytes += chunk.length),
        });
        expect(result.exitCode).toBe(0);
      } finally {
        clearInterval(sampler);
      }
      expect(bytes).toBe(100_000_000);
      expect(peak).toBeLessThan(50 * 2 ** 20);
    });

    it("reveals neither the workspace's host path nor the gateway's directory in /proc", async () => {
      // As the gateway makes it: a tmpfs at <root>/<lease id>, so the bind's source is its root.
      const root = await f.privateDir();
      await chmod(root, 0o711);
      const leaseId = `lease-${process.pid}-hidden`;
      const workspace = join(root, leaseId);
      await mkdir(workspace);
      const opts = `size=1m,mode=0700,uid=${SANDBOX_USER.uid},gid=${SANDBOX_USER.gid}`;
      expect(
        spawnSync('mount', ['-t', 'tmpfs', '-o', opts, 'gatehouse-workspace', workspace]).status,
      ).toBe(0);
      try {
        const { stdout } = await sh(
          f,
          'cat /proc/self/mountinfo; for p in /proc/[0-9]*; do echo "$p"; tr "\\0" "\\n" <"$p/environ"; readlink "$p/cwd"; done',
          { workspace },
        );
        expect(stdout).toContain('/proc/1\n');
        expect(stdout).toMatch(/ \/ \/workspace /);
        for (const secret of [leaseId, root, process.cwd()]) expect(stdout).not.toContain(secret);
      } finally {
        spawnSync('umount', ['--lazy', workspace]);
      }
    });

    it("shows the gateway's environment to no sandbox", async () => {
      process.env.GATEHOUSE_TEST_SECRET = 'gateway-env-secret';
      try {
        const { stdout } = await sh(f, 'cat /proc/self/environ | tr "\\0" "\\n"; env');
        expect(stdout).not.toContain('gateway-env-secret');
        expect(stdout).not.toContain('HOME=');
      } finally {
        delete process.env.GATEHOUSE_TEST_SECRET;
      }
      expect(hostProcesses('gatehouse-never-started')).toEqual([]);
    });
  });
});
