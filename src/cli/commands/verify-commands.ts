import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { verifyAuditLog, verifyReceipt } from '../../audit/index.js';
import type { JwkSet } from '../../audit/index.js';
import { SqliteAuditStore, SqliteDatabase } from '../../storage/index.js';
import { GatehouseClient } from '../client.js';
import { readInput } from './client-commands.js';

/** `receipt verify` and `audit verify`: offline checks that exit 1 naming what is wrong. */
export function verifyCommands(program: Command, receipt: Command, audit: Command): void {
  receipt
    .command('verify <file>')
    .description(
      'verify a receipt: signature, statement, and the request hash recomputed from its fields',
    )
    .option('--keys <fileOrUrl>', 'JWK set file or URL (default: GATEHOUSE_URL/v1/receipt-keys)')
    .action(async (file: string, opts: { keys?: string }) => {
      const envelope = JSON.parse(await readInput(file)) as unknown;
      const jwks = await loadKeys(opts.keys);
      const result = verifyReceipt(envelope, jwks);
      if (!result.ok) {
        process.stderr.write(`receipt INVALID: ${result.reason}\n`);
        process.exitCode = 1;
        return;
      }
      const p = result.statement.predicate;
      process.stdout.write(
        `receipt OK: invocation ${p.invocationId} ${p.status}, ${p.tool.id}@${p.tool.version}, request hash ${p.requestHash}, audit index ${p.audit.index} (tree size ${p.audit.treeSize}), signed by ${(envelope as { signatures: { keyid: string }[] }).signatures[0]?.keyid}\n`,
      );
    });

  audit
    .command('verify')
    .description("verify every tenant's audit log in a data directory, offline")
    .option('--data <dir>', 'data directory (default .data or GATEHOUSE_DATA)')
    .action(async (opts: { data?: string }) => {
      const dir = resolve(opts.data ?? process.env.GATEHOUSE_DATA ?? '.data');
      const file = join(dir, 'gatehouse.db');
      if (!existsSync(file)) throw new Error(`no Gatehouse database at ${file}; pass --data DIR`);
      const keysFile = join(dir, 'keys', 'public-keys.json');
      const jwks: JwkSet = { keys: JSON.parse(await readFile(keysFile, 'utf8')) as JwkSet['keys'] };
      const db = await SqliteDatabase.open({ file });
      try {
        const store = new SqliteAuditStore(db);
        let bad = 0;
        for (const tenant of await store.tenants()) {
          const r = await verifyAuditLog(store, tenant, jwks);
          if (r.ok) {
            process.stdout.write(
              `tenant ${tenant}: OK, ${r.size} records, root ${r.rootHash}, ${r.checkpoints} checkpoint(s) match\n`,
            );
          } else {
            bad += 1;
            process.stderr.write(
              `tenant ${tenant}: INVALID${r.index !== undefined ? ` at index ${r.index}` : ''}: ${r.reason}\n`,
            );
          }
        }
        process.exitCode = bad > 0 ? 1 : 0;
      } finally {
        await db.close();
      }
    });
  void program;
}

async function loadKeys(source: string | undefined): Promise<JwkSet> {
  if (source === undefined || /^https?:\/\//.test(source)) {
    const client = new GatehouseClient(source ?? undefined);
    const path = source === undefined ? '/v1/receipt-keys' : '';
    return (await client.request('GET', path || source!)).body as JwkSet;
  }
  const parsed = JSON.parse(await readFile(source, 'utf8')) as JwkSet | JwkSet['keys'];
  return Array.isArray(parsed) ? { keys: parsed } : parsed;
}
