import type { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import type { JwkSet } from '../../audit/index.js';
import { usageError } from '../cli-error.js';
import { GatehouseClient } from '../client.js';
import { ExitCode } from '../exit-codes.js';
import { readJson } from '../input.js';
import { print, warn } from '../output.js';

/**
 * `receipt get|verify` and `audit checkpoint|verify`. The verifiers exit 1 naming what is wrong;
 * they load the audit code (and, for `audit verify`, the storage) only when they run.
 */
export function evidenceCommands(program: Command): void {
  const client = () => new GatehouseClient();
  const receipt = program.command('receipt').description('signed receipts of invocations');
  receipt
    .command('get <id>')
    .description("print (or save) an invocation's signed receipt")
    .option('--out <file>', 'write it to a file')
    .action(async (id: string, opts: { out?: string }) => {
      const { body } = await client().request(
        'GET',
        `/v1/invocations/${encodeURIComponent(id)}/receipt`,
      );
      if (opts.out) await writeFile(opts.out, `${JSON.stringify(body, null, 2)}\n`);
      else print(body);
    });
  receipt
    .command('verify <file>')
    .description(
      'verify a receipt: signature, statement, and the request hash recomputed from its fields',
    )
    .option('--keys <fileOrUrl>', 'JWK set file or URL (default: GATEHOUSE_URL/v1/receipt-keys)')
    .action(async (file: string, opts: { keys?: string }) => {
      const envelope = await readJson(file);
      const jwks = await loadKeys(opts.keys);
      const { verifyReceipt } = await import('../../audit/index.js');
      const result = verifyReceipt(envelope, jwks);
      if (!result.ok) {
        warn(`receipt INVALID: ${result.reason}`);
        process.exitCode = ExitCode.negative;
        return;
      }
      const p = result.statement.predicate;
      print(
        `receipt OK: invocation ${p.invocationId} ${p.status}, ${p.tool.id}@${p.tool.version}, request hash ${p.requestHash}, audit index ${p.audit.index} (tree size ${p.audit.treeSize}), signed by ${(envelope as { signatures: { keyid: string }[] }).signatures[0]?.keyid}`,
      );
    });

  const audit = program.command('audit').description('the audit log');
  audit
    .command('checkpoint')
    .description("print a signed checkpoint of your tenant's log")
    .action(async () => print((await client().request('GET', '/v1/audit/checkpoint')).body));
  audit
    .command('verify')
    .description("verify every tenant's audit log in a data directory, offline")
    .option('--data <dir>', 'data directory (default .data or GATEHOUSE_DATA)')
    .option('--db <url>', "the gateway's database, if not DATA/gatehouse.db (GATEHOUSE_DB)")
    .action(async (opts: { data?: string; db?: string }) => {
      const { verifyDataDirectory } = await import('../../app/index.js');
      const dir = opts.data ?? process.env.GATEHOUSE_DATA ?? '.data';
      let results;
      try {
        results = await verifyDataDirectory(dir, opts.db ?? process.env.GATEHOUSE_DB);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'NOT_FOUND')
          throw usageError((err as Error).message);
        throw err;
      }
      let bad = 0;
      for (const r of results) {
        if (r.ok) {
          print(
            `tenant ${r.tenant}: OK, ${r.size} records, root ${r.rootHash}, ${r.checkpoints} checkpoint(s) match`,
          );
        } else {
          bad += 1;
          warn(
            `tenant ${r.tenant}: INVALID${r.index !== undefined ? ` at index ${r.index}` : ''}: ${r.reason}`,
          );
        }
      }
      process.exitCode = bad > 0 ? ExitCode.negative : ExitCode.ok;
    });
}

/**
 * `keys list|rotate`: the receipt signing keys of a data directory (SQLite) or of the PostgreSQL
 * database the nodes share, administered on the machine (not over the API: the keys sign every
 * tenant's receipts). Without keys there, or without the master key, a usage error.
 */
export function signingKeyCommands(program: Command): void {
  const keys = program.command('keys').description('the keys that sign receipts and checkpoints');
  const where = (c: Command) =>
    c
      .option('--data <dir>', 'data directory (default .data or GATEHOUSE_DATA)')
      .option('--db <url>', 'the PostgreSQL database the nodes share (GATEHOUSE_DB)');
  const place = (opts: { data?: string; db?: string }) =>
    [
      opts.data ?? process.env.GATEHOUSE_DATA ?? '.data',
      opts.db ?? process.env.GATEHOUSE_DB,
    ] as const;
  where(keys.command('list'))
    .description(
      'list the signing keys, oldest first: key id, created, retired (never a private key)',
    )
    .action(async (opts: { data?: string; db?: string }) => {
      const { listSigningKeys } = await import('../../app/index.js');
      for (const k of await asUsage(listSigningKeys(...place(opts)))) {
        print(
          `${k.kid}  created ${k.createdAt}  ${k.retiredAt ? `retired ${k.retiredAt}` : 'active'}`,
        );
      }
    });
  where(keys.command('rotate'))
    .description(
      'make a new key the active one; the old one stays published (SQLite: stop the gateway first; PostgreSQL: the nodes take it within seconds)',
    )
    .action(async (opts: { data?: string; db?: string }) => {
      const { rotateSigningKeys } = await import('../../app/index.js');
      const r = await asUsage(rotateSigningKeys(...place(opts)));
      print(`rotated: ${r.active} signs from now on; ${r.retired} is retired and stays published`);
    });
}

/** A NOT_FOUND (no keys, no master key, no data directory) is a wrong command line. */
async function asUsage<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'NOT_FOUND') throw usageError((err as Error).message);
    throw err;
  }
}

/** The JWK set from a file, a URL, or (by default) the gateway's `/v1/receipt-keys`. */
async function loadKeys(source: string | undefined): Promise<JwkSet> {
  if (source === undefined)
    return (await new GatehouseClient().request('GET', '/v1/receipt-keys')).body as JwkSet;
  if (/^https?:\/\//.test(source))
    return (await new GatehouseClient(source).request('GET', source)).body as JwkSet;
  const parsed = (await readJson(source)) as JwkSet | JwkSet['keys'];
  return Array.isArray(parsed) ? { keys: parsed } : parsed;
}
