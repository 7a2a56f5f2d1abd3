import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { usageError } from '../cli-error.js';
import { GatehouseClient } from '../client.js';
import { withDownloadedDocument } from '../fetch-document.js';
import { print, warn, withJson } from '../output.js';

interface ImportOptions {
  idPrefix: string;
  version: string;
  select: string;
  class: string[];
  baseUrl?: string;
  dryRun?: boolean;
  allowPrivateAddress?: boolean;
  json?: boolean;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--class opB=production` (repeated) as operationId → class. */
function classesOf(pairs: string[]): Record<string, string> {
  const classes: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1)
      throw usageError(
        `--class takes OPERATION_ID=CLASS, e.g. deletePet=production; got ${JSON.stringify(pair)}`,
      );
    classes[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return classes;
}

/**
 * `tools import-openapi FILE|URL`: one `http` descriptor per selected operation of an OpenAPI
 * 3.0/3.1 document (JSON or YAML, from a file or downloaded by the CLI from an http(s) URL;
 * references inside it resolved, none fetched), printed with `--dry-run`, else published as
 * `AssetReleasePublished` events through `POST /v1/events`.
 */
export function importOpenApiCommand(tools: Command): void {
  withJson(
    tools
      .command('import-openapi <file-or-url>')
      .description(
        'make http descriptors from operations of an OpenAPI 3.0/3.1 document (a JSON or YAML file, or an http(s) URL the CLI downloads) and publish them (maintainer or admin); GET/HEAD are read, the others shared-write unless --class says otherwise',
      )
      .requiredOption('--id-prefix <prefix>', 'prefix of the tool ids, e.g. acme/tickets')
      .requiredOption('--version <version>', 'the version to publish every descriptor as')
      .requiredOption('--select <ids>', 'operationIds to import, comma-separated')
      .option(
        '--class <op=class>',
        'declared class of one operation: read, workspace-write, shared-write or production (repeat for more)',
        collect,
        [],
      )
      .option('--base-url <url>', "where requests go, instead of the document's server URL")
      .option('--dry-run', 'print the descriptors as JSON instead of publishing them')
      .option(
        '--allow-private-address',
        'let an http(s) URL (or its redirects) reach a private or loopback address; link-local and cloud metadata addresses are refused always',
      ),
  ).action(async (file: string, opts: ImportOptions) => {
    const remote = /^https?:\/\//i.test(file);
    if (!remote && !existsSync(file))
      throw usageError(`no file ${file}: give the path or the http(s) URL of an OpenAPI document`);
    const select = opts.select
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const classes = classesOf(opts.class);
    // The parser and the mapping load only when this command runs.
    const { dereferenceOpenApi, importEvents, importOpenApi } =
      await import('../../executors/index.js');
    const { isGatehouseError } = await import('../../core/index.js');
    let imported: ReturnType<typeof importOpenApi>;
    try {
      const document = remote
        ? await withDownloadedDocument(file, (path) => dereferenceOpenApi(path, select), {
            allowPrivate: opts.allowPrivateAddress === true,
          })
        : await dereferenceOpenApi(resolve(file), select);
      imported = importOpenApi(document, {
        idPrefix: opts.idPrefix,
        version: opts.version,
        select,
        classes,
        ...(opts.baseUrl === undefined ? {} : { baseUrl: opts.baseUrl }),
      });
    } catch (e) {
      if (isGatehouseError(e)) throw usageError(`${file}: ${e.message}`, e);
      throw e;
    }
    warn(...imported.warnings.map((w) => `warning: ${w}`));
    if (opts.dryRun) return print(imported.descriptors);
    const events = importEvents(imported.descriptors);
    const { body } = await new GatehouseClient().request('POST', '/v1/events', events);
    if (opts.json) return print(body);
    const results = (body as { results: { result: string }[] }).results;
    print(
      [
        ...imported.descriptors.map(
          (d, i) =>
            `${d.id}@${d.version}: ${results[i]?.result ?? 'sent'} (${d.sideEffect.class}, ${String(d.execution.method)} ${String(d.execution.url)})`,
        ),
        `add them to an agent release: gatehouse releases publish AGENT@NEW --from AGENT@CURRENT --add ${imported.descriptors[0]!.id}@${opts.version}`,
      ].join('\n'),
    );
  });
}
