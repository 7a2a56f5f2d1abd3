#!/usr/bin/env node
import { Command } from 'commander';
import { GatehouseError } from '../core/index.js';
import { ApiError, GatehouseClient } from './client.js';
import { approvalCommands } from './commands/approval-commands.js';
import { clientCommands } from './commands/client-commands.js';
import { secretCommands } from './commands/secret-commands.js';
import { mcpCommands } from './commands/mcp-commands.js';
import { serveCommand } from './commands/serve-command.js';
import { verifyCommands } from './commands/verify-commands.js';

const program = new Command()
  .name('gatehouse')
  .description(
    'Gatehouse, a governed tool gateway for AI agents. Client commands read GATEHOUSE_URL and GATEHOUSE_TOKEN.',
  )
  .version('0.1.0');

serveCommand(program);
clientCommands(program);
approvalCommands(program);
secretCommands(program);
mcpCommands(program);
const receipt = program.commands.find((c) => c.name() === 'receipt')!;
const audit = program.command('audit').description('the audit log');
audit
  .command('checkpoint')
  .description("print a signed checkpoint of your tenant's log")
  .action(async () => {
    process.stdout.write(
      `${JSON.stringify((await new GatehouseClient().request('GET', '/v1/audit/checkpoint')).body, null, 2)}\n`,
    );
  });
verifyCommands(program, receipt, audit);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof ApiError)
    process.stderr.write(
      `error ${err.code}${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message}\n`,
    );
  else if (err instanceof GatehouseError)
    process.stderr.write(`error ${err.code}: ${err.message}\n`);
  else process.stderr.write(`error: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
