import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsImpl from 'ajv-formats';

// ajv-formats ships CommonJS; under NodeNext its default import is the plugin function.
const addFormats = addFormatsImpl as unknown as (ajv: Ajv2020) => Ajv2020;

/** One schema violation, located by JSON pointer (RFC 6901) into the validated value. */
export interface SchemaViolation {
  pointer: string;
  message: string;
}

/**
 * JSON Schema 2020-12 with formats, as the pipeline's validation stage and descriptor publication
 * use it. Defaults are never filled in: the request hash covers the input as given.
 */
export class JsonSchemaValidator {
  private readonly ajv: Ajv2020;

  constructor() {
    this.ajv = new Ajv2020({
      allErrors: true,
      strict: false,
      useDefaults: false,
      coerceTypes: false,
      validateFormats: true,
      // Descriptors are compiled one by one and again on every start: a schema's $id must not be
      // registered globally, or the same $id in a second version (or a republish) would throw.
      addUsedSchema: false,
    });
    addFormats(this.ajv);
  }

  /**
   * Compiles a schema.
   * @throws Error with ajv's explanation when the schema is not a valid JSON Schema.
   */
  compile(schema: Record<string, unknown>): ValidateFunction {
    return this.ajv.compile(schema);
  }

  /** Runs a compiled validator; every violation with its pointer, or an empty list. */
  static violations(validate: ValidateFunction, value: unknown): SchemaViolation[] {
    if (validate(value)) return [];
    return (validate.errors ?? []).map(describe);
  }
}

function describe(e: ErrorObject): SchemaViolation {
  const at = e.instancePath === '' ? '' : e.instancePath;
  switch (e.keyword) {
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      return { pointer: `${at}/${escape(missing)}`, message: `is required but missing` };
    }
    case 'additionalProperties': {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      return { pointer: `${at}/${escape(extra)}`, message: 'is not an allowed property' };
    }
    default:
      return { pointer: at, message: e.message ?? `fails ${e.keyword}` };
  }
}

function escape(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
