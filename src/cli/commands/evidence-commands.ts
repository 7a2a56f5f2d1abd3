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

/** The JWK set from a file, a URL, or (by default) the gateway's `/v1/receipt-keys`. */
async function loadKeys(source: string | undefined): Promise<JwkSet> {
  if (source === undefined)
    return (await new GatehouseClient().request('GET', '/v1/receipt-keys')).body as JwkSet;
  if (/^https?:\/\//.test(source))
    return (await new GatehouseClient(source).request('GET', source)).body as JwkSet;
  const parsed = (await readJson(source)) as JwkSet | JwkSet['keys'];
  return Array.isArray(parsed) ? { keys: parsed } : parsed;
}
