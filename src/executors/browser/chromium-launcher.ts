import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfinedCommand } from '../../sandbox/index.js';

/** Debian's Chromium binary (its /usr/bin/chromium is a shell wrapper that reads /etc). */
export const CHROMIUM_BINARY = '/usr/lib/chromium/chromium';
/** The profile directory inside the sandbox: fresh in each lease's workspace. */
export const PROFILE_INSIDE = '/workspace/.browser-profile';

/**
 * Inside the sandbox: move Playwright's pipe from descriptors 5/6 (where the launcher parked it,
 * since bubblewrap takes 3 and 4) back to 3/4 as `--remote-debugging-pipe` expects, make a fresh
 * profile in the workspace and point Chromium at it (Playwright names a host directory), and exec
 * Chromium with the rest of Playwright's arguments.
 */
function inside(profile: string): string {
  return `exec 3<&5 4>&6 5<&- 6>&- || exit 125
rm -rf ${profile} && mkdir -m 700 ${profile} || exit 125
for a do
  shift
  case $a in
    --user-data-dir=*) set -- "$@" --user-data-dir=${profile} ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec ${CHROMIUM_BINARY} "$@"`;
}

/**
 * The argv bubblewrap runs for a browser: the shell above, with its fresh profile at `profile`
 * (a path inside the sandbox's workspace, default {@link PROFILE_INSIDE}); Playwright's
 * arguments follow it.
 */
export function chromiumArgv(profile: string = PROFILE_INSIDE): string[] {
  if (!/^\/workspace\/\.browser-profile[a-z0-9-]*$/.test(profile))
    throw new Error(`${profile} is not a browser profile path in the workspace`);
  return ['/bin/sh', '-c', inside(profile), 'gatehouse-browser'];
}

/** A launcher file Playwright runs as the browser's "executable", and its removal. */
export interface ChromiumLauncher {
  /** Host path of the launcher script. */
  path: string;
  /**
   * An existing host directory only the gateway's user can enter, to name as Playwright's profile
   * (it would create a missing one); the shell inside swaps in the workspace's fresh profile.
   */
  hostProfile: string;
  /** Removes the launcher and its options file. Safe to repeat. */
  remove(): Promise<void>;
}

/**
 * Writes a launcher for a confined command whose argv is {@link chromiumArgv}: Playwright spawns
 * it with its pipe on descriptors 3 and 4; it parks the pipe on 5 and 6, opens the seccomp filter
 * as 3 and bubblewrap's options as 4 (as the confined command expects), drops to the sandbox user
 * when the command says so, and execs the confined command with Playwright's arguments appended
 * (they reach the shell inside). The files sit in a fresh directory only the gateway's user can
 * read, since the options hold the environment; under `scratch` (the gateway's, emptied at start).
 */
export async function writeChromiumLauncher(
  command: ConfinedCommand,
  scratch: string = tmpdir(),
): Promise<ChromiumLauncher> {
  const dir = await mkdtemp(join(scratch, 'launch-'));
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    await chmod(dir, 0o700);
    const options = join(dir, 'bwrap-options');
    await writeFile(options, command.options, { mode: 0o600 });
    const drop =
      command.user === null
        ? []
        : [
            '/usr/bin/setpriv',
            `--reuid=${command.user.uid}`,
            `--regid=${command.user.gid}`,
            '--clear-groups',
            '--',
          ];
    const script = [
      '#!/bin/sh',
      `exec 5<&3 6>&4 3<${quote(command.seccompPath)} 4<${quote(options)} || exit 125`,
      `exec ${[...drop, command.file, ...command.args].map(quote).join(' ')} "$@"`,
      '',
    ].join('\n');
    const path = join(dir, 'chromium');
    await writeFile(path, script, { mode: 0o700 });
    return { path, hostProfile: dir, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/** A word for a POSIX shell, single-quoted (newlines stay inside the quotes). */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
