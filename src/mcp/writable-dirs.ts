import { realpathSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { invalid } from './mcp-ledger.js';

/** A host directory no stdio server may be given to write, with what it is (for the refusal). */
export interface ProtectedDir {
  path: string;
  /** E.g. "the gateway's data directory". */
  name: string;
}

/** Most writable directories one registration may declare. */
const MAX_WRITABLE_DIRS = 16;

/**
 * Directories of the system and of the sandbox's own layout: a writable directory may not be,
 * contain or lie under one.
 */
const SYSTEM_DIRS = [
  '/usr',
  '/etc',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/boot',
  '/proc',
  '/dev',
  '/sys',
  '/run',
  '/workspace',
];

/**
 * A stdio registration's `writableDirs`, checked and copied: each an absolute, normalised path
 * of an existing directory with no symbolic link on the way (it is mounted at the same path in the
 * sandbox), clear of the system directories and of each `protectedDirs` (the gateway's data
 * directory, the sandbox root), neither inside one nor containing one.
 * @throws GatehouseError INVALID_INPUT naming the entry, what is wrong and what to give.
 */
export function checkWritableDirs(
  raw: unknown,
  protectedDirs: readonly ProtectedDir[],
): string[] | undefined {
  if (raw === undefined) return undefined;
  const at = '/transport/writableDirs';
  if (
    !Array.isArray(raw) ||
    raw.length > MAX_WRITABLE_DIRS ||
    raw.some((d) => typeof d !== 'string')
  )
    throw invalid(
      `${at} must be an array of at most ${MAX_WRITABLE_DIRS} absolute directory paths.`,
      at,
    );
  const guarded = [
    ...SYSTEM_DIRS.map((path) => ({ path, name: `the system directory ${path}` })),
    ...protectedDirs.map((d) => ({ path: real(d.path), name: `${d.name} (${d.path})` })),
  ];
  const dirs = (raw as string[]).map((dir, i) => {
    const p = `${at}/${i}`;
    const shown = JSON.stringify(dir);
    if (!dir.startsWith('/') || dir.includes('\0') || posix.normalize(dir) !== dir || dir === '/')
      throw invalid(
        `${p} (${shown}) must be an absolute, normalised directory path other than /, such as /srv/agent-files.`,
        p,
      );
    const path = dir.endsWith('/') ? dir.slice(0, -1) : dir;
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      throw invalid(
        `${p} (${shown}) does not exist on the gateway's host; create the directory (writable by the sandbox user) and register again.`,
        p,
      );
    }
    if (!isDir) throw invalid(`${p} (${shown}) is not a directory.`, p);
    const resolved = real(path);
    if (resolved !== path)
      throw invalid(
        `${p} (${shown}) passes through a symbolic link; give the real path ${JSON.stringify(resolved)}.`,
        p,
      );
    const clash = guarded.find((g) => overlaps(path, g.path));
    if (clash)
      throw invalid(
        `${p} (${shown}) ${under(path, clash.path) ? 'lies inside' : 'contains'} ${clash.name}, which a server may never write; give a directory of its own.`,
        p,
      );
    return path;
  });
  return dirs.length > 0 ? [...new Set(dirs)] : undefined;
}

/** The path with symbolic links resolved, or as given when it does not exist. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** True when `path` is `dir` or below it. */
function under(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

function overlaps(a: string, b: string): boolean {
  return under(a, b) || under(b, a);
}
