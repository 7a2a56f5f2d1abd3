import type { Command } from 'commander';
import { readFile, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { GatehouseClient } from '../client.js';
import { waitForApproval } from '../wait-for-approval.js';

/** Reads a file, or standard input for `-`. */
export async function readInput(file: string): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Prints a string as it is, anything else as indented JSON. */
export function print(value: unknown): void {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

interface InvokeOptions {
  input: string;
  environment: string;
  idempotencyKey?: string;
  approval?: string;
  wait?: boolean;
}

/** The commands that talk to a running gateway (GATEHOUSE_URL, GATEHOUSE_TOKEN). */
export function clientCommands(program: Command): void {
  const client = () => new GatehouseClient();

  program
    .command('events')
    .description('release events')
    .command('publish <file>')
    .description('apply release events from a JSON file (one event or an array); - reads stdin')
    .action(async (file: string) => {
      const body = parseJson(await readInput(file), file === '-' ? 'standard input' : file);
      print((await client().request('POST', '/v1/events', body)).body);
    });

  program
    .command('tools')
    .description('descriptors')
    .command('list')
    .description('list descriptors and their states')
    .action(async () => {
      const { tools } = (await client().request('GET', '/v1/tools')).body as {
        tools: { id: string; version: string; kind: string; class: string; state: string }[];
      };
      for (const t of tools)
        print(
          `${`${t.id}@${t.version}`.padEnd(32)} ${t.kind.padEnd(8)} ${t.class.padEnd(16)} ${t.state}`,
        );
    });

  program
    .command('invoke <tool>')
    .description('invoke TOOL@VERSION through the pipeline and print the invocation record')
    .requiredOption('--input <json>', 'the tool input as JSON')
    .option('--environment <name>', 'environment', 'dev')
    .option('--idempotency-key <key>', 'idempotency key (default: a new random one)')
    .option('--approval <id>', 'approval id, when resuming an approved call')
    .option(
      '--wait',
      'if the call awaits approval, show progress until a reviewer decides, then resume it',
    )
    .action(async (tool: string, opts: InvokeOptions) => {
      const at = tool.lastIndexOf('@');
      if (at <= 0)
        throw new Error(
          `name the tool as ID@VERSION, e.g. demo/echo@1.0.0; got ${JSON.stringify(tool)}`,
        );
      const key = opts.idempotencyKey ?? randomUUID();
      const body = {
        tool: { id: tool.slice(0, at), version: tool.slice(at + 1) },
        input: parseJson(opts.input, '--input'),
        environment: opts.environment,
        ...(opts.approval ? { approvalId: opts.approval } : {}),
      };
      const headers = { 'idempotency-key': key };
      let { body: record } = await client().request('POST', '/v1/invocations', body, headers);
      const { status, approvalId } = record as { status?: string; approvalId?: string | null };
      if (opts.wait && status === 'awaiting_approval' && approvalId) {
        // Approved: the call resumes and runs; rejected, expired or invalidated: it ends denied.
        await waitForApproval(client(), approvalId, key);
        ({ body: record } = await client().request(
          'POST',
          '/v1/invocations',
          { ...body, approvalId },
          headers,
        ));
      }
      print(record);
      const final = (record as { status?: string }).status;
      process.exitCode =
        final === 'observed' || final === 'awaiting_approval' || final === 'running' ? 0 : 1;
    });

  program
    .command('principals')
    .description('principals of your tenant')
    .command('add <name>')
    .description('create a principal and print its bearer token (shown once; admins)')
    .requiredOption('--role <role...>', 'agent, reviewer, operator, maintainer or admin')
    .option('--project <project>', 'for agents: the project')
    .option('--agent <release>', 'for agents: agentId@version of a published agent release')
    .action(async (name: string, opts: { role: string[]; project?: string; agent?: string }) => {
      const body = {
        name,
        roles: opts.role,
        ...(opts.project ? { project: opts.project } : {}),
        ...(opts.agent ? { agent: opts.agent } : {}),
      };
      print((await client().request('POST', '/v1/principals', body)).body);
    });

  const invocations = program.command('invocations').description('invocation records');
  invocations
    .command('get <id>')
    .description('print an invocation record with its trace')
    .action(async (id: string) =>
      print((await client().request('GET', `/v1/invocations/${encodeURIComponent(id)}`)).body),
    );
  invocations
    .command('list')
    .option('--status <status>', 'only this status')
    .description("list the tenant's invocations, newest first")
    .action(async (opts: { status?: string }) => {
      const q = opts.status ? `?status=${encodeURIComponent(opts.status)}` : '';
      const { invocations: list } = (await client().request('GET', `/v1/invocations${q}`)).body as {
        invocations: { id: string; status: string; tool: { id: string; version: string } }[];
      };
      for (const i of list) print(`${i.id}  ${i.status.padEnd(18)} ${i.tool.id}@${i.tool.version}`);
    });

  const receipt = program.command('receipt').description('receipts');
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

  const policy = program.command('policy').description('Cedar policy of the tenant or a project');
  policy
    .command('get')
    .option('--project <project>', 'a project instead of the tenant')
    .action(async (opts: { project?: string }) => {
      const path = opts.project
        ? `/v1/policies/projects/${encodeURIComponent(opts.project)}`
        : '/v1/policies/tenant';
      print(((await client().request('GET', path)).body as { text: string }).text);
    });
  policy
    .command('set <file>')
    .description('replace the policy with the Cedar text in FILE (- reads stdin)')
    .option('--project <project>', 'a project instead of the tenant')
    .action(async (file: string, opts: { project?: string }) => {
      const path = opts.project
        ? `/v1/policies/projects/${encodeURIComponent(opts.project)}`
        : '/v1/policies/tenant';
      print((await client().request('PUT', path, { text: await readInput(file) })).body);
    });
}
