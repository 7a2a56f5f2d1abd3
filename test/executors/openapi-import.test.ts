import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  dereferenceOpenApi,
  httpExecutionProblem,
  importOpenApi,
  kebabCase,
  planHttpRequest,
} from '../../src/executors/http/index.js';
import type { HttpExecution } from '../../src/executors/http/index.js';
import {
  JsonSchemaValidator,
  compileDescriptorShape,
  validateDescriptor,
} from '../../src/tools/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';

const PETSTORE = new URL('../fixtures/openapi/petstore.json', import.meta.url);
/** The vendored document, as test/fixtures/openapi/README.md describes it. */
const PETSTORE_SHA256 = '5532c559311fb75a0f31982a21e171eaaa552ff3251c3e49580a76eb2421a5ff';

type Schema = Record<string, unknown>;
interface RawOperation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
}

/** Every operation of the resolved document: method, path, operation. */
function operations(doc: unknown): { method: string; path: string; op: RawOperation }[] {
  const paths = (doc as { paths: Record<string, Record<string, RawOperation>> }).paths;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, op })),
  );
}

/**
 * A value the spec's schema allows, built from the spec itself (its `example`s first), the way a
 * client reading the document would: not from the imported descriptor.
 */
function exampleOf(schema: Schema): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(
        Object.entries(props)
          .filter(([, s]) => s.readOnly !== true)
          .map(([k, s]) => [k, exampleOf(s)]),
      );
    }
    case 'array':
      return [exampleOf(schema.items as Schema)];
    case 'integer':
      return 7;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    default:
      return schema.format === 'date-time' ? '2026-01-02T03:04:05Z' : 'text';
  }
}

/** An input for an operation: every parameter and the JSON body, from the spec's examples. */
function exampleInput(op: RawOperation): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const p of op.parameters ?? []) input[p.name] = exampleOf(p.schema);
  const json = op.requestBody?.content['application/json'];
  if (json) input.body = exampleOf(json.schema);
  return input;
}

let doc: unknown;
let all: string[];
beforeAll(async () => {
  doc = await dereferenceOpenApi(fileURLToPath(PETSTORE));
  all = operations(doc).map((o) => o.op.operationId);
});

function find(descriptors: ToolDescriptor[], id: string): ToolDescriptor {
  const d = descriptors.find((x) => x.id === id);
  if (!d) throw new Error(`no ${id} among ${descriptors.map((x) => x.id).join(', ')}`);
  return d;
}

describe('the vendored Swagger Petstore', () => {
  it('is the document its README names, with 20 operations', () => {
    const bytes = readFileSync(PETSTORE);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(PETSTORE_SHA256);
    expect(all).toHaveLength(20);
    expect(new Set(all).size).toBe(20);
  });
});

describe('importOpenApi over the Petstore', () => {
  it('makes one descriptor per selected operation, each one publication accepts', () => {
    const { descriptors, warnings } = importOpenApi(doc, {
      idPrefix: 'petstore',
      version: '1.0.0',
      select: all,
    });
    expect(descriptors.map((d) => d.id)).toEqual(all.map((id) => `petstore/${kebabCase(id)}`));
    const schemas = new JsonSchemaValidator();
    const shape = compileDescriptorShape(schemas);
    for (const d of descriptors) {
      expect(d.version).toBe('1.0.0');
      expect(d.kind).toBe('http');
      expect(httpExecutionProblem(d), d.id).toBeNull();
      expect(() => validateDescriptor(d, schemas, shape, httpExecutionProblem), d.id).not.toThrow();
    }
    // The two form bodies cannot be sent as JSON; the import says so instead of hiding it.
    expect(warnings).toEqual([
      expect.stringMatching(/^updatePetWithForm: .*application\/x-www-form-urlencoded/),
      expect.stringMatching(/^uploadFile: .*multipart\/form-data/),
    ]);
  });

  it("every descriptor's input schema accepts the input built from the spec's examples, and refuses a wrong one", () => {
    const { descriptors } = importOpenApi(doc, {
      idPrefix: 'petstore',
      version: '1.0.0',
      select: all,
    });
    const schemas = new JsonSchemaValidator();
    for (const { op } of operations(doc)) {
      const d = find(descriptors, `petstore/${kebabCase(op.operationId)}`);
      const validate = schemas.compile(d.inputSchema);
      const input = exampleInput(op);
      expect(JsonSchemaValidator.violations(validate, input), op.operationId).toEqual([]);
      // A member no parameter declares is refused: the schema is closed.
      expect(validate({ ...input, unexpected: 1 }), op.operationId).toBe(false);
      const requiredParam = (op.parameters ?? []).find((p) => p.required);
      if (requiredParam) {
        const { [requiredParam.name]: _, ...without } = input;
        expect(validate(without), `${op.operationId} without ${requiredParam.name}`).toBe(false);
      }
    }
  });

  it('maps methods, URLs, parameters, bodies and classes the way the spec says', () => {
    const { descriptors } = importOpenApi(doc, {
      idPrefix: 'acme/pets',
      version: '2.1.0',
      select: ['getPetById', 'deletePet', 'findPetsByStatus', 'addPet', 'getInventory'],
      classes: { deletePet: 'production' },
    });
    const get = find(descriptors, 'acme/pets/get-pet-by-id');
    expect(get.sideEffect.class).toBe('read');
    expect(get.execution).toEqual({
      method: 'GET',
      url: 'http://petstore.swagger.io/v2/pet/{petId}',
    });
    expect(get.title).toBe('Find pet by ID');
    expect(get.description).toBe('Find pet by ID\n\nReturns a single pet');
    expect(get.inputSchema.required).toEqual(['petId']);
    expect(planHttpRequest(get.execution as unknown as HttpExecution, { petId: 42 }).url.href).toBe(
      'http://petstore.swagger.io/v2/pet/42',
    );

    const del = find(descriptors, 'acme/pets/delete-pet');
    expect(del.sideEffect.class).toBe('production');
    expect(del.execution).toMatchObject({ method: 'DELETE', headers: { api_key: '/api_key' } });
    const delPlan = planHttpRequest(del.execution as unknown as HttpExecution, {
      petId: 9,
      api_key: 'k-1',
    });
    expect(delPlan.url.href).toBe('http://petstore.swagger.io/v2/pet/9');
    expect(delPlan.headers).toMatchObject({ api_key: 'k-1' });

    const byStatus = find(descriptors, 'acme/pets/find-pets-by-status');
    const plan = planHttpRequest(byStatus.execution as unknown as HttpExecution, {
      status: ['available', 'sold'],
    });
    expect(plan.url.href).toBe(
      'http://petstore.swagger.io/v2/pet/findByStatus?status=available&status=sold',
    );

    const add = find(descriptors, 'acme/pets/add-pet');
    expect(add.sideEffect.class).toBe('shared-write');
    expect(add.execution).toEqual({
      method: 'POST',
      url: 'http://petstore.swagger.io/v2/pet',
      body: '/body',
    });
    expect(add.inputSchema.required).toEqual(['body']);
    const pet = (add.inputSchema.properties as Record<string, Schema>).body!;
    // The Pet's readOnly id is not part of a request; OpenAPI-only keywords are gone.
    expect(Object.keys(pet.properties as object)).not.toContain('id');
    expect(pet.required).toEqual(['name', 'photoUrls']);
    expect(JSON.stringify(pet)).not.toMatch(/"xml"|"example"/);
    const schemas = new JsonSchemaValidator();
    const validate = schemas.compile(add.inputSchema);
    expect(validate({ body: { name: 'rex', photoUrls: [], status: 'available' } })).toBe(true);
    expect(validate({ body: { name: 'rex', photoUrls: [], status: 'lost' } })).toBe(false);
    expect(validate({ body: { photoUrls: [] } })).toBe(false);

    expect(find(descriptors, 'acme/pets/get-inventory').inputSchema).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {},
    });
  });

  it('takes --base-url over the server URL', () => {
    const { descriptors } = importOpenApi(doc, {
      idPrefix: 'pets',
      version: '1.0.0',
      select: ['getOrderById'],
      baseUrl: 'http://127.0.0.1:8080/api/',
    });
    expect(descriptors[0]!.execution.url).toBe('http://127.0.0.1:8080/api/store/order/{orderId}');
  });

  it('refuses unknown operationIds, naming them and listing the ones the document has', () => {
    const run = () =>
      importOpenApi(doc, {
        idPrefix: 'pets',
        version: '1.0.0',
        select: ['getPetById', 'adoptPet', 'feedPet'],
      });
    expect(run).toThrow(
      /the document has no operation adoptPet, feedPet; its operationIds: addPet, updatePet, /,
    );
    expect(run).toThrow(/deleteUser$/);
  });

  it('refuses a class it does not know, a class for an unselected operation, and a bad prefix', () => {
    const base = { idPrefix: 'pets', version: '1.0.0', select: ['deletePet'] };
    expect(() => importOpenApi(doc, { ...base, classes: { deletePet: 'dangerous' } })).toThrow(
      /the class of deletePet is "dangerous"; it must be one of read, workspace-write, shared-write, production/,
    );
    expect(() => importOpenApi(doc, { ...base, classes: { addPet: 'read' } })).toThrow(
      /a class is given for addPet, which is not selected/,
    );
    expect(() => importOpenApi(doc, { ...base, idPrefix: 'Pets Store' })).toThrow(
      /the id prefix "Pets Store" is not a tool id/,
    );
  });
});

describe('importOpenApi on documents it cannot carry', () => {
  const minimal = (extra: Record<string, unknown>) => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    ...extra,
  });

  it('refuses a relative server URL without a base URL, and a Swagger 2.0 document', () => {
    const doc = minimal({
      servers: [{ url: '/api/v3' }],
      paths: { '/x': { get: { operationId: 'getX', responses: {} } } },
    });
    expect(() => importOpenApi(doc, { idPrefix: 'x', version: '1.0.0', select: ['getX'] })).toThrow(
      /getX: the server URL "\/api\/v3" is not an absolute http\(s\) URL; give the base URL/,
    );
    expect(
      importOpenApi(doc, {
        idPrefix: 'x',
        version: '1.0.0',
        select: ['getX'],
        baseUrl: 'https://h.example',
      }).descriptors[0]!.execution.url,
    ).toBe('https://h.example/x');
    expect(() =>
      importOpenApi(
        { swagger: '2.0', paths: {} },
        { idPrefix: 'x', version: '1.0.0', select: ['getX'] },
      ),
    ).toThrow(/not an OpenAPI document/);
  });

  it('refuses a required body that is not JSON, and a $ref left unresolved', async () => {
    const form = minimal({
      servers: [{ url: 'https://h.example' }],
      paths: {
        '/f': {
          post: {
            operationId: 'postForm',
            requestBody: {
              required: true,
              content: { 'text/csv': { schema: { type: 'string' } } },
            },
            responses: {},
          },
        },
        '/r': {
          get: {
            operationId: 'getRemote',
            parameters: [{ name: 'q', in: 'query', schema: { $ref: 'other.json#/q' } }],
            responses: {},
          },
        },
      },
    });
    expect(() =>
      importOpenApi(form, { idPrefix: 'x', version: '1.0.0', select: ['postForm'] }),
    ).toThrow(/postForm: its request body is text\/csv; only JSON request bodies are sent/);
    // The parser leaves a reference to another file alone: the import names it.
    const resolved = await dereferenceOpenApi(form);
    expect(() =>
      importOpenApi(resolved, { idPrefix: 'x', version: '1.0.0', select: ['getRemote'] }),
    ).toThrow(/getRemote: parameter q: \$ref "other\.json#\/q" is not resolved/);
  });

  it('fills server variables from their defaults and %-encodes path variable names', () => {
    const doc = minimal({
      servers: [{ url: 'https://{region}.h.example/v1', variables: { region: { default: 'eu' } } }],
      paths: {
        '/items/{item-id}': {
          get: {
            operationId: 'get_item',
            parameters: [
              { name: 'item-id', in: 'path', required: true, schema: { type: 'string' } },
            ],
            responses: {},
          },
        },
      },
    });
    const [d] = importOpenApi(doc, {
      idPrefix: 'x',
      version: '1.0.0',
      select: ['get_item'],
    }).descriptors;
    expect(d!.id).toBe('x/get-item');
    expect(d!.execution.url).toBe('https://eu.h.example/v1/items/{item%2Did}');
    expect(httpExecutionProblem(d!)).toBeNull();
    expect(
      planHttpRequest(d!.execution as unknown as HttpExecution, { 'item-id': 'a b' }).url.href,
    ).toBe('https://eu.h.example/v1/items/a%20b');
  });

  it('refuses operations that are not well-formed, and two operations that make one tool id', () => {
    const doc = minimal({
      servers: [{ url: 'https://h.example' }],
      paths: {
        '/a': { get: { operationId: 'getPet', responses: {} } },
        '/b': { get: { operationId: 'get_pet', responses: {} } },
        '/c': { get: { operationId: 'getC', parameters: ['oops'], responses: {} } },
        '/d/{id}': { get: { operationId: 'getD', responses: {} } },
        '/e': {
          post: {
            operationId: 'postE',
            parameters: [
              { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } },
              { name: 'Accept', in: 'header', schema: { type: 'string' } },
              { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
            ],
            responses: {},
          },
        },
      },
    });
    const run = (select: string[]) => () =>
      importOpenApi(doc, { idPrefix: 'x', version: '1.0.0', select });
    expect(run(['getPet', 'get_pet'])).toThrow(
      /getPet and get_pet both become the tool id x\/get-pet/,
    );
    expect(run(['getC'])).toThrow(/getC: a parameter has no name or location/);
    expect(run(['getD'])).toThrow(
      /getD: the path \/d\/\{id\} has \{id\}, which no path parameter declares/,
    );
    // Headers the gateway sets itself are not inputs; the import says so for those OpenAPI does not.
    const e = run(['postE'])();
    expect(e.descriptors[0]!.execution.headers).toEqual({ 'X-Trace': '/X-Trace' });
    expect(Object.keys(e.descriptors[0]!.inputSchema.properties as object)).toEqual(['X-Trace']);
    expect(e.warnings).toEqual([
      'postE: header parameter Idempotency-Key is left out (the gateway sets it itself)',
    ]);
    // The same operation selected twice is one descriptor.
    expect(run(['getPet', 'getPet'])().descriptors).toHaveLength(1);
  });

  it('bounds a schema whose shared references expand without end', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    // Each level names the one below twice: 2^14 subschemas once copied out, from 15 objects.
    for (let i = 0; i < 14; i++) schema = { type: 'object', properties: { a: schema, b: schema } };
    const doc = minimal({
      servers: [{ url: 'https://h.example' }],
      paths: {
        '/w': {
          post: {
            operationId: 'postWide',
            requestBody: { content: { 'application/json': { schema } } },
            responses: {},
          },
        },
      },
    });
    expect(() =>
      importOpenApi(doc, { idPrefix: 'x', version: '1.0.0', select: ['postWide'] }),
    ).toThrow(/postWide: request body: the schema has more than 5000 subschemas/);
  });

  it('imports beside a circular schema no selected operation uses; names a used one, bounded', async () => {
    const node = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
      },
    };
    const components = {
      schemas: {
        Q: { type: 'string' },
        Node: node,
        Self: { $ref: '#/components/schemas/Self' },
        Pair: { type: 'object', properties: { a: { $ref: '#/components/schemas/Pair' } } },
      },
    };
    const document = {
      ...minimal({ servers: [{ url: 'https://h.example' }], components }),
      paths: {
        '/things': {
          get: {
            operationId: 'getThing',
            parameters: [{ name: 'q', in: 'query', schema: { $ref: '#/components/schemas/Q' } }],
            responses: {},
          },
          post: {
            operationId: 'postNode',
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
            },
            responses: {},
          },
          put: {
            operationId: 'putSelf',
            parameters: [{ name: 's', in: 'query', schema: { $ref: '#/components/schemas/Self' } }],
            responses: {},
          },
        },
      },
      components,
    };
    const resolved = await dereferenceOpenApi(document);
    const { descriptors } = importOpenApi(resolved, {
      idPrefix: 'x',
      version: '1.0.0',
      select: ['getThing'],
    });
    expect(descriptors[0]!.inputSchema).toMatchObject({ properties: { q: { type: 'string' } } });
    expect(JSON.stringify(descriptors)).not.toContain('$ref');
    const select = (op: string) => () =>
      importOpenApi(resolved, { idPrefix: 'x', version: '1.0.0', select: [op] });
    expect(select('postNode')).toThrow(
      /^OpenAPI import: postNode: request body: the schema is circular \(\$ref "#\/components\/schemas\/Node"/,
    );
    expect(select('putSelf')).toThrow(
      /^OpenAPI import: putSelf: parameter s: the schema is circular/,
    );
    // The document as a caller sent it is left as it was.
    expect(document.components.schemas.Node).toBe(node);
  });

  it('resolves only what the selected operations use: a broken component or operation elsewhere stops nothing', async () => {
    const document = {
      ...minimal({ servers: [{ url: 'https://h.example' }] }),
      paths: {
        '/a': {
          get: {
            operationId: 'getA',
            parameters: [{ $ref: '#/components/parameters/Q' }],
            responses: {},
          },
          post: {
            operationId: 'postBroken',
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Gone' } } },
            },
            responses: {},
          },
        },
      },
      components: {
        parameters: { Q: { name: 'q', in: 'query', schema: { $ref: '#/components/schemas/Q' } } },
        schemas: {
          Q: { type: 'integer' },
          Dangling: { $ref: '#/components/schemas/Nowhere' },
        },
      },
    };
    const [d] = importOpenApi(await dereferenceOpenApi(document, ['getA']), {
      idPrefix: 'x',
      version: '1.0.0',
      select: ['getA'],
    }).descriptors;
    expect(d!.inputSchema).toMatchObject({ properties: { q: { type: 'integer' } } });
    // A selected operation that uses a broken reference is refused, naming it; an unknown
    // operationId still lists every operation of the document.
    await expect(dereferenceOpenApi(document, ['postBroken'])).rejects.toThrow(
      /cannot be resolved: .*#\/components\/schemas\/Gone/,
    );
    const listed = await dereferenceOpenApi(document, ['getZ']);
    expect(() =>
      importOpenApi(listed, { idPrefix: 'x', version: '1.0.0', select: ['getZ'] }),
    ).toThrow(/no operation getZ; its operationIds: getA, postBroken/);
    // Without a selection the whole document is resolved, as before.
    await expect(dereferenceOpenApi(document)).rejects.toThrow(/cannot be resolved/);
  });

  it('turns nullable into a "null" type', () => {
    const doc = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      servers: [{ url: 'https://h.example' }],
      paths: {
        '/n': {
          get: {
            operationId: 'getN',
            parameters: [
              {
                name: 'n',
                in: 'query',
                schema: { type: 'integer', nullable: true, minimum: 0, exclusiveMinimum: true },
              },
            ],
            responses: {},
          },
        },
      },
    };
    const [d] = importOpenApi(doc, {
      idPrefix: 'x',
      version: '1.0.0',
      select: ['getN'],
    }).descriptors;
    const validate = new JsonSchemaValidator().compile(d!.inputSchema);
    expect(validate({ n: null })).toBe(true);
    expect(validate({ n: 1 })).toBe(true);
    expect(validate({ n: 0 })).toBe(false);
  });
});
