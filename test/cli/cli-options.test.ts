import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';

/** Every command that runs something (has no subcommands), with its names from the top. */
function leaves(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  if (command.commands.length === 0) return [{ path, command }];
  return command.commands.flatMap((c) => leaves(c, [...path, c.name()]));
}

function find(program: Command, path: string[]): Command {
  let c = program;
  for (const name of path) c = c.commands.find((s) => s.name() === name)!;
  return c;
}

/** Values for options whose parser refuses an arbitrary word. */
const SAMPLES: Record<string, string> = {
  '--port': '7070',
  '--request-timeout-ms': '7000',
  '--headers-timeout-ms': '7000',
  '--keep-alive-timeout-ms': '7000',
  '--max-connections': '70',
  '--max-stream-clients': '70',
};

/** The word that sets an option on a command line, and a value when it takes one. */
function words(o: Option, value: string): string[] {
  const flag = o.long ?? o.short!;
  return o.required || o.optional ? [flag, SAMPLES[flag] ?? value] : [flag];
}

/**
 * Parses `path ARGS... REQUIRED-OPTIONS... OPTION [VALUE]` with the command's action replaced, and
 * returns the options the action saw (or the error commander threw).
 */
async function optionsSeen(path: string[], option: Option): Promise<Record<string, unknown>> {
  const program = buildProgram();
  program.configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  const command = find(program, path);
  let seen: Record<string, unknown> | undefined;
  command.action((...args: unknown[]) => {
    seen = (args.at(-1) as Command).opts();
  });
  const argv = [
    ...path,
    ...command.registeredArguments.filter((a) => a.required).map(() => 'arg'),
    ...command.options
      .filter((o) => o.mandatory && o !== option)
      .flatMap((o) => words(o, 'required')),
    ...words(option, 'given'),
  ];
  await program.parseAsync(argv, { from: 'user' });
  if (!seen) throw new Error(`${argv.join(' ')}: the action did not run`);
  return seen;
}

describe('options of every gatehouse command', () => {
  const all = leaves(buildProgram());

  it('finds the commands it checks', () => {
    const names = all.map((l) => l.path.join(' '));
    expect(names).toContain('mcp reapprove');
    expect(names).toContain('invoke');
    expect(names).toContain('serve');
    expect(all.length).toBeGreaterThan(30);
  });

  // The program's own -V/--version and -h/--help must never take a command's option: commander
  // reads program options anywhere on the line unless they are positional.
  for (const { path } of all) {
    const command = find(buildProgram(), path);
    for (const option of command.options) {
      it(`${path.join(' ')} ${option.flags} reaches the command`, async () => {
        const seen = await optionsSeen(path, option);
        expect(seen[option.attributeName()]).not.toEqual(option.defaultValue);
        expect(seen[option.attributeName()]).not.toBeUndefined();
      });
    }
  }

  it('mcp reapprove ID TOOL --version 1.1.0 is the command’s --version, not the CLI’s', async () => {
    const program = buildProgram();
    let seen: unknown[] = [];
    find(program, ['mcp', 'reapprove']).action((...args: unknown[]) => {
      seen = args.slice(0, 3);
    });
    await program.parseAsync(['mcp', 'reapprove', 'mcp_1', 'greet', '--version', '1.1.0'], {
      from: 'user',
    });
    expect(seen).toEqual(['mcp_1', 'greet', { version: '1.1.0' }]);
  });
});
