import type { Command } from 'commander';
import { GatehouseClient } from '../client.js';
import { readInput } from '../input.js';
import { usageError } from '../cli-error.js';
import { print, withJson } from '../output.js';

interface SecretView {
  name: string;
  version: number;
  scopes: string[];
  createdAt: string;
}

interface ValueOptions {
  valueFile: string;
  keepNewline?: boolean;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The value from a file or standard input (`-`), never from a flag, so it stays out of shell
 * history and process listings. One trailing newline (as `echo` adds) is dropped unless kept.
 */
async function readValue(opts: ValueOptions): Promise<string> {
  const text = await readInput(opts.valueFile);
  const value = opts.keepNewline ? text : text.replace(/\r?\n$/, '');
  if (value === '') {
    throw usageError(
      `${opts.valueFile === '-' ? 'standard input' : opts.valueFile} is empty: a secret needs a value.`,
    );
  }
  return value;
}

const path = (name: string) => `/v1/secrets/${encodeURIComponent(name)}`;

/** `secrets list|put|rotate|delete`: administration of the tenant's secrets (admins). */
export function secretCommands(program: Command): void {
  const client = () => new GatehouseClient();
  const secrets = program
    .command('secrets')
    .description(
      "your tenant's secrets for the credential broker (admins); values are never shown",
    );
  withJson(
    secrets.command('list').description('list secrets: name, version, scopes, created'),
  ).action(async (opts: { json?: boolean }) => {
    const { body } = await client().request('GET', '/v1/secrets');
    if (opts.json) return print(body);
    const { secrets: list } = body as { secrets: SecretView[] };
    if (list.length === 0) print('no secrets');
    for (const s of list)
      print(
        `${s.name.padEnd(32)} v${String(s.version).padEnd(4)} ${s.createdAt}  ${s.scopes.join(',')}`,
      );
  });
  secrets
    .command('put <name>')
    .description('store a new version of a secret with its scopes')
    .requiredOption('--value-file <file>', 'read the value from this file; - reads standard input')
    .requiredOption('--scope <scope>', 'a scope credentials may ask for (repeat for more)', collect)
    .option('--keep-newline', 'keep a trailing newline of the value')
    .action(async (name: string, opts: ValueOptions & { scope: string[] }) => {
      const s = (
        await client().request('PUT', path(name), {
          value: await readValue(opts),
          scopes: opts.scope,
        })
      ).body as SecretView;
      print(`secret ${s.name} is at version ${s.version} (scopes ${s.scopes.join(', ')})`);
    });
  secrets
    .command('rotate <name>')
    .description('store a new value of an existing secret, keeping its scopes')
    .requiredOption('--value-file <file>', 'read the value from this file; - reads standard input')
    .option('--keep-newline', 'keep a trailing newline of the value')
    .action(async (name: string, opts: ValueOptions) => {
      const s = (
        await client().request('POST', `${path(name)}/rotate`, { value: await readValue(opts) })
      ).body as SecretView;
      print(`secret ${s.name} is at version ${s.version}`);
    });
  secrets
    .command('delete <name>')
    .description('delete every version of a secret; calls that need it then fail closed')
    .action(async (name: string) => {
      await client().request('DELETE', path(name));
      print(`secret ${name} is deleted`);
    });
}
