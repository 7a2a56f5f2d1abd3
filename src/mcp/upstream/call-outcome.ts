import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';

/** What a call to an upstream tool came to. */
export type UpstreamCallOutcome =
  | { kind: 'result'; result: CallToolResult }
  /** Nothing was sent: the upstream cannot have acted. */
  | { kind: 'not-sent'; code: string; message: string }
  /** The request was sent and no answer came (timeout, abort, connection lost). */
  | { kind: 'no-answer'; code: string; message: string }
  /** The upstream answered with a protocol error: it refused the request. */
  | { kind: 'refused'; code: string; message: string };

/** A tool call that threw, and what of its connection explains why. */
interface FailedCall {
  timeoutMs: number;
  signal: AbortSignal;
  /** True once the connection has ended; asked only when the error itself does not say. */
  isClosed: () => boolean;
  /** The connection's stderr note (` (stderr: …)` or ''), added when the connection was lost. */
  stderrNote: () => string;
  /** Set when the connection was closed for a message over its bound (the call's, or another's). */
  tooLarge?: () => Error | null;
}

/** Why a call must not be sent (aborted already, or the connection is closed), or null. */
export function unsendable(signal: AbortSignal, isClosed: boolean): UpstreamCallOutcome | null {
  if (signal.aborted)
    return {
      kind: 'not-sent',
      code: 'ABORTED',
      message: 'the call was aborted before it was sent',
    };
  if (isClosed)
    return { kind: 'not-sent', code: 'NOT_CONNECTED', message: 'the upstream is not connected' };
  return null;
}

/**
 * What a call that threw `err` came to: not sent (the SDK could not send it), no answer (timeout,
 * abort, connection lost, a message over the bound, any other failure) or refused (the upstream's
 * protocol error).
 */
export function failedCallOutcome(err: unknown, call: FailedCall): UpstreamCallOutcome {
  const tooLarge = call.tooLarge?.();
  if (tooLarge && !call.signal.aborted)
    return { kind: 'no-answer', code: 'UPSTREAM_MESSAGE_TOO_LARGE', message: tooLarge.message };
  if (err instanceof SdkError) {
    switch (err.code) {
      case SdkErrorCode.NotConnected:
      case SdkErrorCode.SendFailed:
        return { kind: 'not-sent', code: 'NOT_CONNECTED', message: err.message };
      case SdkErrorCode.RequestTimeout:
        return {
          kind: 'no-answer',
          code: 'TIMEOUT',
          message: `the upstream did not answer within ${call.timeoutMs} ms`,
        };
      case SdkErrorCode.ConnectionClosed:
        return {
          kind: 'no-answer',
          code: 'CONNECTION_LOST',
          message: `the connection to the upstream was lost during the call${call.stderrNote()}`,
        };
      default:
        return { kind: 'no-answer', code: 'UPSTREAM_ERROR', message: err.message };
    }
  }
  if (call.signal.aborted)
    return {
      kind: 'no-answer',
      code: 'ABORTED',
      message: 'the call was aborted after it was sent',
    };
  if (isProtocolError(err))
    return { kind: 'refused', code: 'UPSTREAM_REFUSED', message: describeError(err) };
  if (call.isClosed())
    return { kind: 'no-answer', code: 'CONNECTION_LOST', message: describeError(err) };
  return { kind: 'no-answer', code: 'UPSTREAM_ERROR', message: describeError(err) };
}

/** An error's message, or the thrown value as text. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isProtocolError(err: unknown): boolean {
  return typeof (err as { code?: unknown } | null)?.code === 'number';
}
