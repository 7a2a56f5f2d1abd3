import { ExitCode } from './exit-codes.js';

/**
 * A failure the CLI finds itself, before or after talking to the gateway: a command line it cannot
 * act on (bad JSON in an option, a malformed `ID@VERSION`, a file that cannot be read: exit
 * {@link ExitCode.usage}), or something named that does not exist ({@link ExitCode.refused}).
 */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** A {@link CliError} for a wrong command line ({@link ExitCode.usage}). */
export function usageError(message: string, cause?: unknown): CliError {
  return new CliError(ExitCode.usage, message, cause === undefined ? undefined : { cause });
}
