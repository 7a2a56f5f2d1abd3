import { execFile } from 'node:child_process';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Debian's python3 with the `seccomp` module (python3-seccomp); not a pyenv or venv python. */
const SECCOMP_PYTHON = '/usr/bin/python3';

/**
 * The filter, as a libseccomp program. Default allow; what it refuses returns EPERM (ENOSYS for
 * clone3, so libc falls back to clone, whose flags a filter can see), so programs see an error
 * instead of dying. Syscalls of a foreign architecture (i386 via int 0x80) all fail with EPERM.
 *
 * Sockets: only AF_UNIX, and AF_INET/AF_INET6 of type SOCK_STREAM (protocol 0 or TCP), because
 * the egress forwarder inside the sandbox listens on 127.0.0.1:3128. Seccomp cannot see the
 * address given to connect(), so it is the empty network namespace (loopback only) that confines
 * AF_INET; the filter removes raw, packet, netlink, UDP and every other family.
 *
 * libseccomp allows one comparison per argument in a rule, so "not one of these values" is
 * written as the values below, between and above them.
 */
const FILTER_SCRIPT = String.raw`
import errno, sys
import seccomp

out = sys.argv[1]
f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.ERRNO(errno.EPERM))
EPERM = seccomp.ERRNO(errno.EPERM)
A = seccomp.Arg

def deny(name, *args, action=EPERM):
    # Skip a syscall this architecture does not have; any other error fails the compile.
    if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) == -1:
        return
    f.add_rule(action, name, *args)

for name in [
    'ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd', 'kcmp',
    'keyctl', 'add_key', 'request_key',
    'bpf', 'perf_event_open', 'userfaultfd', 'io_uring_setup', 'io_uring_enter', 'io_uring_register',
    'mount', 'umount', 'umount2', 'pivot_root', 'chroot', 'fsopen', 'fsconfig', 'fsmount', 'fspick',
    'move_mount', 'open_tree', 'mount_setattr', 'open_by_handle_at', 'name_to_handle_at',
    'unshare', 'setns',
    'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module', 'reboot',
    'swapon', 'swapoff', 'acct', 'quotactl', 'quotactl_fd', 'lookup_dcookie', 'syslog', 'vhangup',
    'iopl', 'ioperm', 'uselib', 'nfsservctl', 'fanotify_init',
    'settimeofday', 'clock_settime', 'clock_adjtime',
]:
    deny(name)

# personality(): only PER_LINUX; no ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC and the like.
deny('personality', A(0, seccomp.NE, 0))

# New namespaces only through clone flags a filter can read; clone3 passes a struct it cannot.
for flag in [0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
             0x20000000, 0x40000000]:
    deny('clone', A(0, seccomp.MASKED_EQ, flag, flag))
deny('clone3', action=seccomp.ERRNO(errno.ENOSYS))

# Terminal input injection.
for req in [0x5412, 0x541C]:  # TIOCSTI, TIOCLINUX
    deny('ioctl', A(1, seccomp.MASKED_EQ, 0xFFFFFFFF, req))

AF_UNIX, AF_INET, AF_INET6, SOCK_STREAM = 1, 2, 10, 1
# Families other than AF_UNIX (1), AF_INET (2), AF_INET6 (10).
deny('socket', A(0, seccomp.EQ, 0))
for family in range(3, 10):
    deny('socket', A(0, seccomp.EQ, family))
deny('socket', A(0, seccomp.GT, 10))
for family in [AF_INET, AF_INET6]:
    # Any type but SOCK_STREAM (the low four bits; the rest are SOCK_NONBLOCK/SOCK_CLOEXEC).
    for kind in range(16):
        if kind != SOCK_STREAM:
            deny('socket', A(0, seccomp.EQ, family), A(1, seccomp.MASKED_EQ, 0xF, kind))
    # Stream protocols other than 0 and IPPROTO_TCP (6): SCTP, MPTCP.
    for proto in range(1, 6):
        deny('socket', A(0, seccomp.EQ, family), A(2, seccomp.EQ, proto))
    deny('socket', A(0, seccomp.EQ, family), A(2, seccomp.GT, 6))
deny('socketpair', A(0, seccomp.EQ, 0))
deny('socketpair', A(0, seccomp.GT, AF_UNIX))

with open(out, 'wb') as fh:
    f.export_bpf(fh)
`;

/**
 * Compiles the sandbox's seccomp filter into `<stateDir>/seccomp.bpf` (a classic BPF program for
 * bubblewrap's `--seccomp FD`) with Debian's python3-seccomp, and returns its path.
 * Safe to repeat: the file is replaced atomically.
 * @throws when /usr/bin/python3 or its seccomp module is missing, with python's message.
 */
export async function compileSeccompFilter(stateDir: string): Promise<string> {
  const path = join(stateDir, 'seccomp.bpf');
  const tmp = `${path}.${process.pid}.tmp`;
  await execFileAsync(SECCOMP_PYTHON, ['-I', '-c', FILTER_SCRIPT, tmp], {
    env: { PATH: '/usr/bin:/bin' },
    timeout: 30_000,
  });
  await rename(tmp, path);
  return path;
}
