import {
  PROGRAM_CHECK_FUNCTION,
  START_FORWARDER_SCRIPT,
  WORKSPACE,
  sandboxEnv,
  shellQuote,
} from './bwrap-args.js';
import type { SandboxSpec } from '../sandbox.js';

/** A warm sandbox's stub pipe, inside as outside: the slot's first file pipe. */
export const STUB_FD = 7;

/**
 * A warm sandbox's pid 1 child, inside the sandbox: with egress, start the forwarder and wait
 * until it listens (as a cold run does before its program); then say `ready` on the stub pipe and
 * read one line, the call, and eval it (stubLine()). A read that fails (the pool closed the
 * sandbox) ends it without running anything.
 */
export function stubCommand(egress: boolean): string[] {
  const script = `${egress ? `${START_FORWARDER_SCRIPT}\n` : ''}${PROGRAM_CHECK_FUNCTION}
nl='
'
echo ready >&${STUB_FD} || exit 125
IFS= read -r line <&${STUB_FD} || exit 125
eval "$line"
exit 125`;
  return ['/bin/sh', '-c', script, 'gatehouse-warm'];
}

/**
 * The call's line for a warm stub: look the program up on the call's PATH (a program that is
 * missing or not executable is a setup failure, as bubblewrap's failed exec is in a cold run:
 * nothing started, and the same message), say `exec` on the stub pipe, then exec it under exactly
 * the environment a cold run gives it (`env -i`: nothing of the stub's own). Every word is
 * quoted: the line is evaluated as shell.
 */
export function stubLine(spec: Pick<SandboxSpec, 'argv' | 'env' | 'egressSocket'>): string {
  const env: Record<string, string> = { ...sandboxEnv(spec), PWD: WORKSPACE };
  const program = shellQuote(spec.argv[0]!);
  const assignments = Object.entries(env).map(([k, v]) => shellQuote(`${k}=${v}`));
  return [
    `gatehouse_program ${program} ${shellQuote(env.PATH!)} || exit;`,
    `echo exec >&${STUB_FD} || exit 125;`,
    `exec ${STUB_FD}>&- /usr/bin/env -i ${assignments.join(' ')} ${spec.argv.map(shellQuote).join(' ')}`,
  ].join(' ');
}

/** Whether a warm stub can run `argv` as a cold run would: env would take a `=` name for a variable. */
export function stubCanRun(argv: readonly string[]): boolean {
  return argv.length > 0 && !argv[0]!.includes('=');
}
