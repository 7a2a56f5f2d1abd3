import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { accessCommands } from './commands/access-commands.js';
import { approvalCommands } from './commands/approval-commands.js';
import { clientCommands } from './commands/client-commands.js';
import { evidenceCommands, signingKeyCommands } from './commands/evidence-commands.js';
import { invocationCommands } from './commands/invocation-commands.js';
import { invokeCommand } from './commands/invoke-command.js';
import { mcpCommands } from './commands/mcp-commands.js';
import { releaseCommands } from './commands/release-commands.js';
import { secretCommands } from './commands/secret-commands.js';
import { serveCommand } from './commands/serve-command.js';
import { toolCommands } from './commands/tool-commands.js';

/** The version in package.json: the one the package was built and published as. */
function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/**
 * The `gatehouse` command line. Program options (`-V/--version`, `-h/--help`) are read only
 * before the command name (positional options), so a command's own options keep their names:
 * `mcp reapprove ID TOOL --version 1.1.0` is the command's `--version`. Parse errors throw
 * (exitOverride) so the caller maps them to an exit status. Only commander and the light CLI
 * modules load here; `serve` and the offline verifiers import the server code when they run.
 */
export function buildProgram(): Command {
  const program = new Command()
    .name('gatehouse')
    .description(
      'Gatehouse, a governed tool gateway for AI agents. Client commands read GATEHOUSE_URL and GATEHOUSE_TOKEN. Exit status: 0 ok, 1 no (verification failed, invocation failed or uncertain), 2 usage, 3 refused (HTTP 4xx), 4 gateway unreachable or failing, 5 awaiting approval.',
    )
    .version(packageVersion(), '-V, --version', 'print the version of gatehouse')
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');
  serveCommand(program);
  toolCommands(program);
  invokeCommand(program);
  releaseCommands(program);
  clientCommands(program);
  invocationCommands(program);
  accessCommands(program);
  approvalCommands(program);
  secretCommands(program);
  mcpCommands(program);
  evidenceCommands(program);
  signingKeyCommands(program);
  return program;
}
