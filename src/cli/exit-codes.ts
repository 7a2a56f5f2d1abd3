/**
 * The exit status of every `gatehouse` command: one small table, documented in docs/cli.md, so a
 * script can tell a wrong command line from a refusal, an unreachable gateway or a call that waits.
 */
export const ExitCode = {
  /** The command did what was asked (an invocation: its effect is observed). */
  ok: 0,
  /**
   * The command ran and the answer is no: a verification found a problem, or an invocation ended
   * `failed` or `uncertain`. Also any failure of the CLI itself not named below.
   */
  negative: 1,
  /** The command line is wrong (unknown command or option, a missing argument, bad JSON, a file that cannot be read); nothing was sent. */
  usage: 2,
  /** The gateway refused the request (HTTP 4xx): a denied invocation, invalid input, no such id, a missing role, a conflict. */
  refused: 3,
  /** No usable answer: the gateway cannot be reached, or it failed (HTTP 5xx, capacity exhausted included). */
  unavailable: 4,
  /** The invocation awaits approval (HTTP 202): resume it with `--approval ID`, or use `--wait`. */
  awaitingApproval: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit status for an HTTP status the gateway answered. */
export function exitCodeOfHttp(status: number): ExitCode {
  if (status === 0 || status >= 500) return ExitCode.unavailable;
  if (status >= 400) return ExitCode.refused;
  if (status === 202) return ExitCode.awaitingApproval;
  return ExitCode.ok;
}
