import type { Command } from 'commander';
import { usageError } from '../cli-error.js';
import { GatehouseClient } from '../client.js';
import { parseJson } from '../input.js';
import { reportInvocation } from '../invocation-report.js';
import { splitRef, withJson } from '../output.js';
import { waitForApproval } from '../wait-for-approval.js';

interface InvokeOptions {
  input: string;
  environment: string;
  idempotencyKey?: string;
  approval?: string;
  runId?: string;
  attemptId?: string;
  wait?: boolean;
  json?: boolean;
}

/** `gatehouse invoke TOOL@VERSION --input JSON`: one call through the pipeline (agents). */
export function invokeCommand(program: Command): void {
  withJson(
    program
      .command('invoke <tool>')
      .description(
        'invoke TOOL@VERSION through the pipeline; prints the outcome and the output (the record with --json)',
      )
      .requiredOption('--input <json>', 'the tool input as JSON (see: gatehouse tools show TOOL)')
      .option('--environment <name>', 'environment', 'dev')
      .option('--idempotency-key <key>', 'idempotency key (default: a new random one)')
      .option('--approval <id>', 'approval id, when resuming an approved call')
      .option('--run-id <id>', 'run id: calls with the same run and attempt ids share one lease')
      .option('--attempt-id <id>', 'attempt id within the run')
      .option(
        '--wait',
        'if the call awaits approval, show progress until a reviewer decides, then resume it',
      ),
  ).action(async (ref: string, opts: InvokeOptions) => {
    const tool = splitRef(ref);
    if (!tool)
      throw usageError(
        `name the tool as ID@VERSION, e.g. demo/echo@1.0.0; got ${JSON.stringify(ref)}`,
      );
    const client = new GatehouseClient();
    const key = opts.idempotencyKey ?? crypto.randomUUID();
    const body = {
      tool,
      input: await parseJson(opts.input, '--input'),
      environment: opts.environment,
      ...(opts.approval ? { approvalId: opts.approval } : {}),
      ...(opts.runId ? { runId: opts.runId } : {}),
      ...(opts.attemptId ? { attemptId: opts.attemptId } : {}),
    };
    const headers = { 'idempotency-key': key };
    let answer = await client.request('POST', '/v1/invocations', body, headers);
    const { status, approvalId } = answer.body as { status?: string; approvalId?: string | null };
    if (opts.wait && status === 'awaiting_approval' && approvalId) {
      // Approved: the call resumes and runs; rejected, expired or invalidated: it ends denied.
      await waitForApproval(client, approvalId, key);
      answer = await client.request('POST', '/v1/invocations', { ...body, approvalId }, headers);
    }
    process.exitCode = reportInvocation(answer, opts.json ?? false);
  });
}
