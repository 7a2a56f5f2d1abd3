import { posix } from 'node:path';
import { ErrorCode, GatehouseError } from '../../core/index.js';
import { EGRESS_SOCKET, WORKSPACE } from './bwrap-args.js';
import type { SandboxSpec } from '../sandbox.js';

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Sandbox paths a read-only mount may not cover, contain or lie under. */
const RESERVED_MOUNT_PATHS = [WORKSPACE, '/proc', '/dev', posix.dirname(EGRESS_SOCKET)];
/** Sandbox paths a file may not lie under: host mounts (the disk) and special filesystems. */
const RESERVED_FILE_PATHS = [
  WORKSPACE,
  '/proc',
  '/dev',
  '/usr',
  '/etc',
  '/bin',
  '/sbin',
  '/lib',
  '/lib64',
  posix.dirname(EGRESS_SOCKET),
];

/** The system directories bound read-only: a writable mount may not cover or lie under one. */
const SYSTEM_PATHS = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Smallest limits a run can start with: bubblewrap itself needs two processes and some memory. */
const MIN_MEMORY_BYTES = 16 * 2 ** 20;
const MIN_PIDS = 4;

/**
 * Refuses a malformed spec before anything is made: an id that cannot name a cgroup, relative or
 * unnormalised paths, a mount over the workspace or /proc, a file that would land on a host mount
 * (credentials must stay in the private in-memory root), limits bubblewrap cannot start under.
 * @throws GatehouseError INVALID_INPUT naming the field.
 */
export function checkSpec(spec: SandboxSpec): void {
  if (!ID.test(spec.id)) bad('id', 'must be 1–128 letters, digits, ".", "_" or "-"');
  if (spec.argv.length === 0) bad('argv', 'must name a program');
  if (spec.argv.some((a) => a.includes('\0'))) bad('argv', 'must not contain NUL');
  for (const [name, value] of Object.entries(spec.env)) {
    if (!ENV_NAME.test(name)) bad(`env.${name}`, 'is not a valid variable name');
    if (value.includes('\0')) bad(`env.${name}`, 'must not contain NUL');
  }
  absolute('workspace', spec.workspace);
  spec.readOnlyMounts.forEach((m, i) => checkMount(`readOnlyMounts[${i}]`, m, []));
  checkWritableMounts(spec.writableMounts ?? []);
  const mounted = [
    ...RESERVED_FILE_PATHS,
    ...[...spec.readOnlyMounts, ...(spec.writableMounts ?? [])].map((m) => m.sandbox),
  ];
  (spec.files ?? []).forEach((f, i) => {
    absolute(`files[${i}].path`, f.path);
    if (f.path === '/' || mounted.some((r) => under(f.path, r))) {
      bad(`files[${i}].path`, `must not lie under a mount (${mounted.join(', ')})`);
    }
    if (!Number.isInteger(f.mode) || f.mode < 0 || f.mode > 0o777) {
      bad(`files[${i}].mode`, 'must be permission bits within 0o777');
    }
  });
  if (spec.egressSocket !== null) absolute('egressSocket', spec.egressSocket);
  const { memoryBytes, cpus, pids, timeoutMs } = spec.limits;
  if (!Number.isSafeInteger(memoryBytes) || memoryBytes < MIN_MEMORY_BYTES) {
    bad('limits.memoryBytes', `must be an integer of at least ${MIN_MEMORY_BYTES}`);
  }
  if (!(cpus > 0 && cpus <= 1024)) bad('limits.cpus', 'must be a positive number of cores');
  if (!Number.isSafeInteger(pids) || pids < MIN_PIDS) {
    bad('limits.pids', `must be an integer of at least ${MIN_PIDS}`);
  }
  if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) bad('limits.timeoutMs', 'must be positive');
}

/**
 * Refuses writable mounts that are not absolute and normalised, or that cover or lie under the
 * workspace, /proc, /dev, the egress socket's directory or a system directory bound read-only.
 * @throws GatehouseError INVALID_INPUT naming the field.
 */
export function checkWritableMounts(mounts: readonly { host: string; sandbox: string }[]): void {
  mounts.forEach((m, i) => checkMount(`writableMounts[${i}]`, m, SYSTEM_PATHS));
}

/** A mount's paths: absolute, and clear of the reserved paths (and of `also`). */
function checkMount(
  field: string,
  m: { host: string; sandbox: string },
  also: readonly string[],
): void {
  absolute(`${field}.host`, m.host);
  absolute(`${field}.sandbox`, m.sandbox);
  const reserved = [...RESERVED_MOUNT_PATHS, ...also];
  if (m.sandbox === '/' || reserved.some((r) => overlaps(m.sandbox, r)))
    bad(`${field}.sandbox`, `must not cover or lie under ${reserved.join(', ')}`);
}

function absolute(field: string, path: string): void {
  if (!path.startsWith('/') || posix.normalize(path) !== path || path.includes('\0')) {
    bad(field, 'must be an absolute, normalised path');
  }
  if (path.length > 1 && path.endsWith('/')) bad(field, 'must not end with "/"');
}

/** True when `path` is `dir` or below it. */
function under(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/** True when one of the two paths is the other or lies under it. */
function overlaps(a: string, b: string): boolean {
  return under(a, b) || under(b, a);
}

function bad(field: string, why: string): never {
  throw new GatehouseError(ErrorCode.INVALID_INPUT, `Sandbox spec: ${field} ${why}.`, {
    details: { field },
  });
}
