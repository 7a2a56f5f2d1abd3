import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { patternRedactor } from '../secrets/index.js';

/** The log levels `GATEHOUSE_LOG_LEVEL` may name, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Whether a string names a {@link LogLevel}. */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  level: LogLevel;
  /** Where the JSON lines go (default standard error: see {@link createLogger}). */
  destination?: DestinationStream;
}

/** Most bytes of log lines waiting for standard error; past it, lines are dropped. */
const PENDING_LOG_BYTES = 16 * 1024 * 1024;

/**
 * Standard error, written off the event loop: a call's log line costs no system call on its path,
 * and a reader that stops reading (a stalled log collector) cannot stop the gateway, which drops
 * lines past {@link PENDING_LOG_BYTES} instead. What is pending is written at exit; a killed
 * process may lose its last lines (the records are in the database either way).
 */
function standardError(): DestinationStream {
  return pino.destination({ dest: 2, sync: false, maxLength: PENDING_LOG_BYTES });
}

/**
 * The gateway's structured log: one JSON object per line (pino), ISO times. No line carries a
 * secret: an `Authorization` or `Cookie` header is censored wherever a request is logged, and
 * every string of every line (the message, fields, an error's message and stack) passes the
 * redactor of known secret patterns. Values brokered for one call are removed before they reach
 * a line, by that call's own redactor (see the pipeline's log).
 */
export function createLogger(o: LoggerOptions): Logger {
  const redactor = patternRedactor();
  const clean = <T>(value: T): T => redactor.redactJson(value).value;
  return pino(
    {
      level: o.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'headers.authorization',
          'headers.cookie',
        ],
        censor: '[REDACTED]',
      },
      // `formatters.log` already turned errors into clean fields; pino's default `err`
      // serializer would serialize those again (and name their type `Object`).
      serializers: { err: (e: unknown) => e },
      formatters: {
        log: (fields) =>
          clean(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, loggable(v)]))),
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a) =>
            typeof a === 'string' ? redactor.redactText(a).text : a,
          );
          method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    o.destination ?? standardError(),
  );
}

/** An error as plain fields (type, message, stack, code, cause…); anything else as it is. */
function loggable(value: unknown): unknown {
  return value instanceof Error ? pino.stdSerializers.err(value) : value;
}
