import { CommanderError } from 'commander';
import { ApiError } from './client.js';
import { CliError } from './cli-error.js';
import { ExitCode, exitCodeOfHttp } from './exit-codes.js';
import { detailLines, warn } from './output.js';

/**
 * Writes what went wrong to stderr and returns the exit status: a refusal as `STATUS CODE:
 * MESSAGE` with its details, an unreachable gateway as the reason, a wrong command line as
 * commander or the command said it. Never prints a stack.
 */
export function reportError(err: unknown): ExitCode {
  if (err instanceof CommanderError) {
    // Commander has already written its message (or the help, or the version).
    return err.code === 'commander.helpDisplayed' || err.code === 'commander.version'
      ? ExitCode.ok
      : ExitCode.usage;
  }
  if (err instanceof ApiError) {
    warn(
      err.status === 0 ? `error: ${err.message}` : `${err.status} ${err.code}: ${err.message}`,
      ...detailLines(err.details),
    );
    return exitCodeOfHttp(err.status);
  }
  if (err instanceof CliError) {
    warn(`error: ${err.message}`);
    return err.exitCode;
  }
  warn(`error: ${(err as Error).message ?? String(err)}`);
  return ExitCode.negative;
}
