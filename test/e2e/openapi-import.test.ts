import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDescriptor } from '../../src/tools/index.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import type { CliRun } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';

const PETSTORE = fileURLToPath(new URL('../fixtures/openapi/petstore.json', import.meta.url));
const show = (r: CliRun) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

/** A stand-in for the Petstore on loopback: answers every request with what it saw. */
const seen: { method: string; url: string }[] = [];
let server: Server;
let base: string;
let g: DemoGateway;

function as(token: string) {
  return (...args: string[]) => runCli(args, { GATEHOUSE_URL: g.url!, GATEHOUSE_TOKEN: token });
}

/** `tools import-openapi PETSTORE --id-prefix petstore --version 1.0.0 --select SELECT ...more`. */
function importArgs(select: string, ...more: string[]): string[] {
  return [
    'tools',
    'import-openapi',
    PETSTORE,
    '--id-prefix',
    'petstore',
    '--version',
    '1.0.0',
    '--select',
    select,
    ...more,
  ];
}

beforeAll(async () => {
  ensureBuilt();
  server = createServer((req, res) => {
    if (req.url === '/docs/petstore.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(readFileSync(PETSTORE));
      return;
    }
    if (req.url?.startsWith('/docs/')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such document');
      return;
    }
    seen.push({ method: req.method ?? '', url: req.url ?? '' });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: Number(req.url?.split('/').pop()), name: 'rex' }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}/v2`;
  g = await startDemoGateway({ listen: true, sandbox: { egressAllow: [`127.0.0.1:${port}`] } });
});
afterAll(async () => {
  await g?.close();
  server?.closeAllConnections();
  await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
});

describe('gatehouse tools import-openapi', () => {
  it('--dry-run prints one descriptor per selected operation and publishes nothing', async () => {
    const run = await as(g.tokens.maintainer)(
      ...importArgs(
        'getPetById,deletePet,updatePetWithForm',
        '--class',
        'deletePet=production',
        '--dry-run',
      ),
    );
    expect(run.code, show(run)).toBe(0);
    const printed = JSON.parse(run.stdout) as ToolDescriptor[];
    expect(printed.map((d) => `${d.id}@${d.version} ${d.sideEffect.class}`)).toEqual([
      'petstore/get-pet-by-id@1.0.0 read',
      'petstore/delete-pet@1.0.0 production',
      'petstore/update-pet-with-form@1.0.0 shared-write',
    ]);
    expect(printed[0]!.execution).toEqual({
      method: 'GET',
      url: 'http://petstore.swagger.io/v2/pet/{petId}',
    });
    expect(printed[1]!.execution).toMatchObject({
      method: 'DELETE',
      headers: { api_key: '/api_key' },
    });
    expect(run.stderr).toMatch(/^warning: updatePetWithForm: its optional request body/m);
    expect(
      g.gateway.registry.list('acme').some((d) => d.descriptor.id.startsWith('petstore/')),
    ).toBe(false);
  });

  it('reads the document from an http(s) URL, and names the URL when it answers an error', async () => {
    const origin = new URL(base).origin;
    const fromFile = await as(g.tokens.maintainer)(...importArgs('getPetById,addPet', '--dry-run'));
    const args = importArgs('getPetById,addPet', '--dry-run');
    args[2] = `${origin}/docs/petstore.json`;
    // A loopback (private) address is refused before connecting unless it is allowed.
    const refused = await as(g.tokens.maintainer)(...args);
    expect(refused.code, show(refused)).toBe(2);
    expect(refused.stderr).toContain(
      `refused to fetch ${origin}/docs/petstore.json: 127.0.0.1 is a loopback (127.0.0.0/8) address`,
    );
    args.push('--allow-private-address');
    const fromUrl = await as(g.tokens.maintainer)(...args);
    expect(fromUrl.code, show(fromUrl)).toBe(0);
    expect(JSON.parse(fromUrl.stdout)).toEqual(JSON.parse(fromFile.stdout));

    args[2] = `${origin}/docs/missing.json`;
    const missing = await as(g.tokens.maintainer)(...args);
    expect(missing.code, show(missing)).toBe(2);
    expect(missing.stderr).toContain(`cannot fetch ${origin}/docs/missing.json: it answered 404`);
  });

  it('refuses operationIds the document does not have, naming them and those it has', async () => {
    const run = await as(g.tokens.maintainer)(...importArgs('getPetById,adoptPet', '--dry-run'));
    expect(run.code, show(run)).toBe(2);
    expect(run.stderr).toMatch(
      /the document has no operation adoptPet; its operationIds: addPet, /,
    );
    expect(run.stdout).toBe('');
  });

  it('publishes, an agent release adds the tool, and the agent calls it (README "Govern a REST API")', async () => {
    const publish = importArgs('getPetById,addPet', '--base-url', base);
    const published = await as(g.tokens.maintainer)(...publish);
    expect(published.code, show(published)).toBe(0);
    expect(published.stdout).toContain(
      `petstore/get-pet-by-id@1.0.0: applied (read, GET ${base}/pet/{petId})`,
    );
    expect(published.stdout).toContain(
      `petstore/add-pet@1.0.0: applied (shared-write, POST ${base}/pet)`,
    );
    const stored = g.gateway.registry
      .list('acme')
      .filter((d) => d.descriptor.id.startsWith('petstore/'));
    expect(
      stored.map((d) => `${d.descriptor.id}@${d.descriptor.version} ${d.state}`).sort(),
    ).toEqual(['petstore/add-pet@1.0.0 active', 'petstore/get-pet-by-id@1.0.0 active']);

    // The same import again is the same events: duplicates, not conflicts.
    const again = await as(g.tokens.maintainer)(...publish);
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout).toContain('petstore/get-pet-by-id@1.0.0: duplicate');

    const release = await as(g.tokens.admin)(
      'releases',
      'publish',
      'demo-agent@1.1.0',
      '--from',
      'demo-agent@1.0.0',
      '--add',
      'petstore/get-pet-by-id@1.0.0',
    );
    expect(release.code, show(release)).toBe(0);
    const principal = await as(g.tokens.admin)(
      'principals',
      'add',
      'pet-bot',
      '--role',
      'agent',
      '--project',
      'web',
      '--agent',
      'demo-agent@1.1.0',
    );
    expect(principal.code, show(principal)).toBe(0);
    const { token } = JSON.parse(principal.stdout) as { token: string };
    const called = await as(token)(
      'invoke',
      'petstore/get-pet-by-id@1.0.0',
      '--input',
      '{"petId": 42}',
    );
    expect(called.code, show(called)).toBe(0);
    expect(called.stdout).toMatch(/^200 observed: petstore\/get-pet-by-id@1\.0\.0/);
    expect(seen).toContainEqual({ method: 'GET', url: '/v2/pet/42' });
  });
});

describe('POST /v1/tools/import-openapi', () => {
  const document = JSON.parse(readFileSync(PETSTORE, 'utf8')) as unknown;
  const body = (extra: Record<string, unknown>) => ({
    document,
    idPrefix: 'store',
    version: '1.0.0',
    select: ['getInventory', 'placeOrder'],
    ...extra,
  });

  it('returns the descriptors with dryRun, and publishes them without it', async () => {
    type Answer = { descriptors: ToolDescriptor[]; results?: { result: string }[] };
    const dry = await g.inject<Answer>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.maintainer,
      body: body({ dryRun: true, classes: { placeOrder: 'production' } }),
    });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.descriptors.map((d) => `${d.id} ${d.sideEffect.class}`)).toEqual([
      'store/get-inventory read',
      'store/place-order production',
    ]);
    expect(dry.body.results).toBeUndefined();
    expect(g.gateway.registry.list('acme').some((d) => d.descriptor.id.startsWith('store/'))).toBe(
      false,
    );

    const published = await g.inject<Answer>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.admin,
      body: body({}),
    });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect(published.body.results!.map((r) => r.result)).toEqual(['applied', 'applied']);
    const ids = g.gateway.registry
      .list('acme')
      .filter((d) => d.descriptor.id.startsWith('store/'))
      .map((d) => `${d.descriptor.id} ${d.descriptor.sideEffect.class}`)
      .sort();
    expect(ids).toEqual(['store/get-inventory read', 'store/place-order shared-write']);
  });

  it('refuses unknown operationIds with 400 naming them, and callers who may not publish with 403', async () => {
    const unknown = await g.inject<ErrorBody>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.maintainer,
      body: body({ select: ['getInventory', 'sellPet'], dryRun: true }),
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('INVALID_INPUT');
    expect(unknown.body.error.message).toMatch(/no operation sellPet; its operationIds: addPet, /);

    const noSelect = await g.inject<ErrorBody>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.maintainer,
      body: body({ select: [] }),
    });
    expect(noSelect.status).toBe(400);
    expect(noSelect.body.error.message).toMatch(
      /^\/select must be a list of 1 to 200 operationIds/,
    );

    // A document that is not well-formed OpenAPI is a 400 naming the operation, never a 500.
    const malformed = await g.inject<ErrorBody>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.maintainer,
      body: {
        ...body({ select: ['getBad'], dryRun: true }),
        document: {
          openapi: '3.0.0',
          info: { title: 'bad', version: '1' },
          servers: [{ url: 'https://bad.example' }],
          paths: { '/b': { get: { operationId: 'getBad', parameters: [7], responses: {} } } },
        },
      },
    });
    expect(malformed.status, JSON.stringify(malformed.body)).toBe(400);
    expect(malformed.body.error.message).toMatch(/getBad: a parameter has no name or location/);

    // A circular or broken schema no selected operation uses stops nothing; a circular one that is used is refused,
    // naming the operation and the reference, without showing where the gateway runs.
    const loopDocument = {
      openapi: '3.0.0',
      info: { title: 'loop', version: '1' },
      servers: [{ url: 'https://loop.example' }],
      paths: {
        '/l': {
          get: { operationId: 'getLoop', responses: {} },
          post: {
            operationId: 'postLoop',
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/B' } } },
            },
            responses: {},
          },
        },
      },
      components: {
        schemas: {
          A: { $ref: '#/components/schemas/A' },
          B: { type: 'object', properties: { next: { $ref: '#/components/schemas/B' } } },
          Dangling: { $ref: '#/components/schemas/Nowhere' },
        },
      },
    };
    const unused = await g.inject<{ descriptors: ToolDescriptor[] }>(
      'POST',
      '/v1/tools/import-openapi',
      {
        token: g.tokens.maintainer,
        body: { ...body({ select: ['getLoop'], dryRun: true }), document: loopDocument },
      },
    );
    expect(unused.status, JSON.stringify(unused.body)).toBe(200);
    expect(unused.body.descriptors.map((d) => d.id)).toEqual(['store/get-loop']);
    const circular = await g.inject<ErrorBody>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.maintainer,
      body: { ...body({ select: ['postLoop'], dryRun: true }), document: loopDocument },
    });
    expect(circular.status, JSON.stringify(circular.body)).toBe(400);
    expect(circular.body.error.message).toMatch(
      /postLoop: request body: the schema is circular \(\$ref "#\/components\/schemas\/B"/,
    );
    expect(circular.body.error.message).not.toContain(process.cwd());

    // A parameter named __proto__ never becomes a published descriptor's member (the rule every
    // request body keeps: a descriptor sent to POST /v1/events with one is refused as it arrives).
    const proto = await g.inject<ErrorBody>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.maintainer,
      body: {
        ...body({ select: ['getProto'] }),
        document: {
          openapi: '3.0.0',
          info: { title: 'proto', version: '1' },
          servers: [{ url: 'https://proto.example' }],
          paths: {
            '/p': {
              get: {
                operationId: 'getProto',
                parameters: [{ name: '__proto__', in: 'query', schema: { type: 'string' } }],
                responses: {},
              },
            },
          },
        },
      },
    });
    expect(proto.status, JSON.stringify(proto.body)).toBe(422);
    expect(JSON.stringify(proto.body)).toMatch(/__proto__\\?" is not accepted/);
    expect(g.gateway.registry.list('acme').some((d) => d.descriptor.id === 'store/get-proto')).toBe(
      false,
    );

    const reviewer = await g.inject<ErrorBody>('POST', '/v1/tools/import-openapi', {
      token: g.tokens.reviewer,
      body: body({ dryRun: true }),
    });
    expect(reviewer.status).toBe(403);
  });
});
