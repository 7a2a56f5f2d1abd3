import type { InvocationRecord } from '../invocation/index.js';
import type { ApiAnswer } from './client.js';
import { ExitCode } from './exit-codes.js';
import { detailLines, print, warn } from './output.js';

/**
 * Shows what `POST /v1/invocations` answered and returns the exit status. For people: an observed
 * call prints a status line and its output on stdout; a call awaiting approval prints the approval
 * id and how to resume; a denied, failed or uncertain call prints `STATUS CODE: MESSAGE`, the
 * details that say what to fix, and the invocation id on stderr. With `json`, stdout gets the whole
 * record whatever its status, and stderr still gets the one line of a refusal.
 */
export function reportInvocation(answer: ApiAnswer, json: boolean): ExitCode {
  const r = answer.body as InvocationRecord;
  const tool = `${r.tool.id}@${r.tool.version}`;
  if (json) print(r);
  switch (r.status) {
    case 'observed': {
      if (json) return ExitCode.ok;
      print(`${answer.status} observed: ${tool} in ${r.environment}, invocation ${r.id}`);
      for (const w of r.warnings) print(`warning: ${w}`);
      if (r.redactions.length > 0)
        print(
          `redacted: ${r.redactions.map((x) => `${x.kind}${x.encoding ? ` (${x.encoding})` : ''} ×${x.count}`).join(', ')}`,
        );
      if (r.outputInfo?.truncated)
        print(
          `output cut at the gateway's bound; the whole output is artifact ${r.outputInfo.artifact}`,
        );
      print(r.output === undefined ? '(no output)' : r.output);
      return ExitCode.ok;
    }
    case 'awaiting_approval':
    case 'queued':
    case 'running': {
      if (json) return ExitCode.awaitingApproval;
      if (r.status !== 'awaiting_approval') {
        print(`${answer.status} ${r.status}: ${tool} in ${r.environment}, invocation ${r.id}`);
        return ExitCode.awaitingApproval;
      }
      print(
        [
          `${answer.status} awaiting approval: ${tool} is ${r.effectiveClass} in ${r.environment}; approval ${r.approvalId}, invocation ${r.id}`,
          `once a reviewer approved it (gatehouse approvals approve ${r.approvalId}), run the same command again with --idempotency-key ${r.idempotencyKey} --approval ${r.approvalId}, or use --wait`,
        ].join('\n'),
      );
      return ExitCode.awaitingApproval;
    }
    case 'denied':
    case 'failed':
    case 'uncertain': {
      const e = r.error;
      warn(
        `${answer.status} ${e?.code ?? r.status.toUpperCase()}: ${e?.message ?? `the invocation is ${r.status}`}`,
        ...detailLines(e?.details ?? {}),
        `invocation ${r.id} ${r.status}${e?.stage ? ` at ${e.stage}` : ''}${json ? '' : `; the whole record: --json, or gatehouse invocations get ${r.id}`}`,
      );
      return r.status === 'denied' ? ExitCode.refused : ExitCode.negative;
    }
  }
}
