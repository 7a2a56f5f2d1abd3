import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * What a test needs of the machine (bubblewrap, socat, cgroups, openssl…), in one place.
 *
 * Outside CI a test whose prerequisite is missing is skipped, and the reason is printed. With
 * `CI=true` it fails instead, naming what is missing and the set-up command, so a CI run never
 * passes by skipping what it was meant to test.
 */

/** The command that installs what the tests need (scripts/system-packages.json). */
export const SETUP_COMMAND = 'npm run setup';

/** True in CI (`CI=true` or `CI=1`), where a missing prerequisite fails the run. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/** The message a missing prerequisite fails or skips with. */
export function missingMessage(what: string, problem: string): string {
  return `${what} is not available on this machine: ${problem}. Run ${SETUP_COMMAND} (as root, it installs the Debian packages the tests need).`;
}

/**
 * For `describe.skipIf` / `it.skipIf`: true (skip) when `problem` says the prerequisite `what` is
 * missing, after printing why; false when it is present (`problem` null).
 * @throws Error with CI=true when it is missing, so the test file fails instead of skipping.
 */
export function skipWithout(what: string, problem: string | null): boolean {
  if (problem === null) return false;
  const message = missingMessage(what, problem);
  if (inCi()) throw new Error(`CI=true: ${message}`);
  process.stderr.write(`skipping tests that need ${message}\n`);
  return true;
}

/** The part of a test context that can skip the running test. */
export interface SkippableContext {
  skip(note?: string): void;
}

/**
 * Inside a running test, once it knows (say, from a started gateway) whether `what` is there:
 * skips the test when it is missing, or, with CI=true, fails it. Returns when it is present.
 */
export function requireInTest(ctx: SkippableContext, what: string, problem: string | null): void {
  if (problem === null) return;
  const message = missingMessage(what, problem);
  if (inCi()) throw new Error(`CI=true: ${message}`);
  process.stderr.write(`skipping a test that needs ${message}\n`);
  ctx.skip(message);
}

/** Null when `name` is an executable on PATH (or, given as an absolute path, exists); else why not. */
export function missingCommand(name: string): string | null {
  const candidates = name.startsWith('/')
    ? [name]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter((d) => d !== '')
        .map((d) => join(d, name));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return null;
    } catch {
      // Not here; try the next directory.
    }
  }
  return `${name} is not ${name.startsWith('/') ? 'there' : 'on PATH'}`;
}
