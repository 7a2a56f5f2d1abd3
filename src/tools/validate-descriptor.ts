import type { ErrorObject, ValidateFunction } from 'ajv';
import {
  ErrorCode,
  GatehouseError,
  canonicalDigest,
  isSideEffectClass,
  jsonValueProblem,
} from '../core/index.js';
import type { ToolDescriptor } from './descriptor.js';
import { ToolKind } from './descriptor.js';
import { JsonSchemaValidator } from './json-schema.js';
import type { SchemaViolation } from './json-schema.js';
import { descriptorSchema } from './event-schemas.js';
import {
  credentialNeedProblems,
  fillBindingProblems,
  unboundHeaderProblems,
} from '../secrets/index.js';
import type { CredentialNeed } from '../secrets/index.js';

/**
 * Says whether this gateway can run a descriptor's kind and execution config: null when it can,
 * otherwise a sentence saying why not (e.g. "no native handler named x is registered").
 */
export type ExecutionCheck = (descriptor: ToolDescriptor) => string | null;

/**
 * What an executor checks of a call's input beyond the descriptor's input schema (a browser
 * tool's steps against its allowed actions), or null when it checks nothing for this descriptor.
 * The check returns every problem with its JSON pointer; the validation stage denies with them.
 */
export type InputCheck = (
  descriptor: ToolDescriptor,
) => ((input: unknown) => SchemaViolation[]) | null;

/**
 * Compiles a descriptor's input schema, with its executor's input check (if any) run after it:
 * one validate function whose errors are the schema's and then the check's.
 * @throws Error with ajv's explanation when the schema is not a valid JSON Schema.
 */
export function compileInput(
  schemas: JsonSchemaValidator,
  d: ToolDescriptor,
  inputCheck?: InputCheck,
): ValidateFunction {
  const schema = schemas.compile(d.inputSchema);
  const check = inputCheck?.(d) ?? null;
  if (check === null) return schema;
  const both = ((input: unknown) => {
    const fits = schema(input);
    const errors: ErrorObject[] = [...(fits ? [] : (schema.errors ?? []))];
    for (const v of check(input))
      errors.push({
        instancePath: v.pointer,
        keyword: 'executor',
        message: v.message,
        params: {},
        schemaPath: '#',
      });
    both.errors = errors.length > 0 ? errors : null;
    return errors.length === 0;
  }) as ValidateFunction;
  both.schema = schema.schema;
  return both;
}

/** A descriptor that passed publication checks, with what the pipeline needs of it. */
export interface ValidatedDescriptor {
  descriptor: ToolDescriptor;
  /** SHA-256 (hex) of the descriptor's RFC 8785 canonical JSON. */
  digest: string;
  /** The compiled input schema. */
  validateInput: ValidateFunction;
}

const kinds = Object.values(ToolKind) as string[];

/** Kinds whose calls reach whatever their egress allows, not one origin: see unboundHeaderProblems. */
const MANY_ORIGINS = new Set<string>([ToolKind.shell, ToolKind.browser, ToolKind.computerUse]);

/**
 * Validates a descriptor at publication: its shape, its kind (known and runnable here), its class,
 * its class rules, and that its input (and output) schemas compile.
 * @throws GatehouseError INVALID_DESCRIPTOR naming each problem and where (`pointerBase` prefixes
 * every pointer, e.g. `/data/descriptor`).
 */
export function validateDescriptor(
  value: unknown,
  schemas: JsonSchemaValidator,
  shape: ValidateFunction,
  canExecute: ExecutionCheck,
  pointerBase = '',
  inputCheck?: InputCheck,
): ValidatedDescriptor {
  // The rules every request body keeps (no `__proto__` member, no lone surrogate, bounded depth),
  // kept here too: a descriptor made by the gateway (an OpenAPI import names members after the
  // document's parameters) reaches publication without passing a request body's parser.
  const json = jsonValueProblem(value);
  if (json !== null) throw invalid([{ pointer: pointerBase + json.pointer, message: json.reason }]);
  const problems = JsonSchemaValidator.violations(shape, value).map((v) => ({
    pointer: pointerBase + v.pointer,
    message: v.message,
  }));
  if (problems.length > 0) throw invalid(problems);
  const d = value as ToolDescriptor;
  const at = (p: string) => pointerBase + p;
  if (!kinds.includes(d.kind)) {
    problems.push({
      pointer: at('/kind'),
      message: `is "${d.kind}"; known kinds are ${kinds.join(', ')}`,
    });
  }
  if (!isSideEffectClass(d.sideEffect.class)) {
    problems.push({
      pointer: at('/sideEffect/class'),
      message: `is "${String(d.sideEffect.class)}"; it must be read, workspace-write, shared-write or production`,
    });
  }
  (d.sideEffect.rules ?? []).forEach((rule, i) => {
    if (rule.matches !== undefined) {
      try {
        new RegExp(rule.matches);
      } catch (err) {
        problems.push({
          pointer: at(`/sideEffect/rules/${i}/matches`),
          message: `is not a valid regular expression (${(err as Error).message})`,
        });
      }
    }
  });
  const needs = (d.credentials ?? []) as unknown as CredentialNeed[];
  for (const problem of [
    ...credentialNeedProblems(needs),
    ...(MANY_ORIGINS.has(d.kind) ? unboundHeaderProblems(needs) : []),
    ...fillBindingProblems(needs, d.kind === ToolKind.browser),
  ]) {
    problems.push({ pointer: at(problem.pointer), message: problem.message });
  }
  let validateInput: ValidateFunction | undefined;
  try {
    validateInput = schemas.compile(d.inputSchema);
  } catch (err) {
    problems.push({
      pointer: at('/inputSchema'),
      message: `does not compile as JSON Schema 2020-12: ${(err as Error).message}`,
    });
  }
  if (d.outputSchema) {
    try {
      schemas.compile(d.outputSchema);
    } catch (err) {
      problems.push({
        pointer: at('/outputSchema'),
        message: `does not compile as JSON Schema 2020-12: ${(err as Error).message}`,
      });
    }
  }
  if (problems.length === 0) {
    const reason = canExecute(d);
    if (reason !== null) problems.push({ pointer: at('/execution'), message: reason });
  }
  if (problems.length > 0 || !validateInput) throw invalid(problems);
  if (inputCheck) validateInput = compileInput(schemas, d, inputCheck);
  return { descriptor: d, digest: canonicalDigest(d), validateInput };
}

/** The compiled shape check of descriptors, made once per gateway. */
export function compileDescriptorShape(schemas: JsonSchemaValidator): ValidateFunction {
  return schemas.compile(descriptorSchema);
}

function invalid(problems: { pointer: string; message: string }[]): GatehouseError {
  const list = problems.map((p) => `${p.pointer || '/'} ${p.message}`).join('; ');
  return new GatehouseError(ErrorCode.INVALID_DESCRIPTOR, `Invalid descriptor: ${list}.`, {
    details: { violations: problems },
  });
}
