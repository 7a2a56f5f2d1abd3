import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Command } from 'commander';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { secretCommands } from '../../src/cli/commands/secret-commands.js';
import { ManualClock } from '../../src/core/index.js';
import { errorBody } from '../../src/http/error-status.js';
import { accessOf } from '../../src/http/access-table.js';
import { secretRoutes } from '../../src/http/routes/secret-routes.js';
import { SecretCipher, SecretService } from '../../src/secrets/index.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteSecretStore } from '../../src/storage/sqlite/sqlite-secret-store.js';
import type { Principal } from '../../src/tenancy/index.js';

const admin: Principal = {
  id: 'admin-1',
  tenant: 'acme',
  name: 'Ada',
  roles: ['admin'],
  project: null,
  agent: null,
};

/** The secret routes on Fastify, as the server mounts them, for a fixed admin principal. */
function secretApp(secrets: SecretService): FastifyInstance {
  const app = Fastify();
  for (const route of secretRoutes({ secrets })) {
    app.route({
      method: route.method,
      url: route.url,
      handler: async (req, reply) => {
        const answer = await route.handler(admin, req, reply, {
          reach: 'tenant',
          owner: null,
          token: null,
        });
        void reply.code(answer!.status);
        return answer!.body;
      },
    });
  }
  app.setErrorHandler((err, _req, reply) => {
    const { status, body } = errorBody(err);
    void reply.code(status).send(body);
  });
  return app;
}

describe('secret routes', () => {
  let dir: string;
  let db: SqliteDatabase;
  let store: SqliteSecretStore;
  let app: FastifyInstance;
  const cipher = SecretCipher.fromKey(randomBytes(32));
  const VALUE = 'ghp_route_secret_value';

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-routes-'));
    db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
    store = new SqliteSecretStore(db);
    app = secretApp(new SecretService({ store, cipher, clock: new ManualClock() }));
  });
  afterEach(async () => {
    await app.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are for admins only', () => {
    const routes = secretRoutes({ secrets: {} as SecretService });
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/secrets',
      'PUT /v1/secrets/:name',
      'POST /v1/secrets/:name/rotate',
      'DELETE /v1/secrets/:name',
    ]);
    for (const r of routes)
      expect(accessOf(r.method, r.url)?.roles, `${r.method} ${r.url}`).toEqual({ admin: 'tenant' });
  });

  it('put, rotate, list and delete, never answering with the value', async () => {
    const answers: string[] = [];
    const call = async (
      method: 'GET' | 'PUT' | 'POST' | 'DELETE',
      url: string,
      payload?: object,
    ) => {
      const res = await app.inject({ method, url, ...(payload ? { payload } : {}) });
      answers.push(res.body);
      return res;
    };
    const put = await call('PUT', '/v1/secrets/github-token', { value: VALUE, scopes: ['read'] });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ name: 'github-token', version: 1, scopes: ['read'] });
    const rotated = await call('POST', '/v1/secrets/github-token/rotate', { value: `${VALUE}2` });
    expect(rotated.json()).toMatchObject({ version: 2, scopes: ['read'] });
    const listed = await call('GET', '/v1/secrets');
    expect(listed.json()).toEqual({
      secrets: [
        {
          name: 'github-token',
          version: 2,
          scopes: ['read'],
          createdAt: '2026-01-01T00:00:00.000Z',
        },
      ],
    });
    const stored = (await store.latest('acme', 'github-token'))!;
    expect(cipher.unseal(stored, stored.sealed)).toBe(`${VALUE}2`);
    const deleted = await call('DELETE', '/v1/secrets/github-token');
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await call('GET', '/v1/secrets')).json()).toEqual({ secrets: [] });
    expect(answers.join('\n')).not.toContain(VALUE);
  });

  it.each([
    ['PUT', '/v1/secrets/Bad-Name', { value: 'v', scopes: ['s'] }, 400, '/name'],
    ['PUT', '/v1/secrets/token', { scopes: ['s'] }, 400, '/value'],
    ['PUT', '/v1/secrets/token', { value: 'v' }, 400, '/scopes'],
    ['PUT', '/v1/secrets/token', { value: 'v', scopes: [] }, 400, '/scopes'],
    ['PUT', '/v1/secrets/token', { value: 7, scopes: ['s'] }, 400, '/value'],
    ['POST', '/v1/secrets/token/rotate', { value: 'v' }, 404, undefined],
    ['DELETE', '/v1/secrets/token', undefined, 404, undefined],
  ] as const)('%s %s %j answers %i', async (method, url, payload, status, pointer) => {
    const res = await app.inject({ method, url, ...(payload ? { payload } : {}) });
    expect(res.statusCode).toBe(status);
    const body = res.json<{ error: { code: string; details: { pointer?: string } } }>();
    expect(body.error.code).toBe(status === 404 ? 'NOT_FOUND' : 'INVALID_INPUT');
    expect(body.error.details.pointer).toBe(pointer);
  });
});

describe('gatehouse secrets', () => {
  let dir: string;
  let db: SqliteDatabase;
  let store: SqliteSecretStore;
  let app: FastifyInstance;
  let printed: string[];
  const cipher = SecretCipher.fromKey(randomBytes(32));
  const saved = { url: process.env.GATEHOUSE_URL, token: process.env.GATEHOUSE_TOKEN };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-cli-'));
    db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
    store = new SqliteSecretStore(db);
    app = secretApp(new SecretService({ store, cipher, clock: new ManualClock() }));
    process.env.GATEHOUSE_URL = await app.listen({ host: '127.0.0.1', port: 0 });
    process.env.GATEHOUSE_TOKEN = 'test-token';
    printed = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    process.env.GATEHOUSE_URL = saved.url;
    process.env.GATEHOUSE_TOKEN = saved.token;
    if (saved.url === undefined) delete process.env.GATEHOUSE_URL;
    if (saved.token === undefined) delete process.env.GATEHOUSE_TOKEN;
    await app.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...args: string[]) => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    secretCommands(program);
    await program.parseAsync(['node', 'gatehouse', 'secrets', ...args]);
  };
  const valueOf = async (name: string) => {
    const s = (await store.latest('acme', name))!;
    return cipher.unseal(s, s.sealed);
  };

  it('puts from a file (dropping one trailing newline), rotates, lists and deletes', async () => {
    const file = join(dir, 'value');
    writeFileSync(file, 'from-a-file\n');
    await run('put', 'github-token', '--value-file', file, '--scope', 'read', '--scope', 'write');
    expect(await valueOf('github-token')).toBe('from-a-file');
    expect((await store.latest('acme', 'github-token'))!.scopes).toEqual(['read', 'write']);
    writeFileSync(file, 'pem\n');
    await run('rotate', 'github-token', '--value-file', file, '--keep-newline');
    expect(await valueOf('github-token')).toBe('pem\n');
    await run('list');
    await run('delete', 'github-token');
    expect(printed.join('')).toMatch(/secret github-token is at version 1 \(scopes read, write\)/);
    expect(printed.join('')).toMatch(/github-token\s+v2\s+2026-01-01T00:00:00.000Z\s+read,write/);
    expect(printed.join('')).toMatch(/secret github-token is deleted/);
    expect(printed.join('')).not.toContain('from-a-file');
    expect(await store.latest('acme', 'github-token')).toBeUndefined();
  });

  it('reads the value from standard input for -', async () => {
    vi.spyOn(process, 'stdin', 'get').mockReturnValue(
      Readable.from([
        Buffer.from('from-'),
        Buffer.from('stdin\n'),
      ]) as unknown as typeof process.stdin,
    );
    await run('put', 'token', '--value-file', '-', '--scope', 's');
    expect(await valueOf('token')).toBe('from-stdin');
  });

  it('takes no value from a flag, and refuses an empty value', async () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    await expect(
      run('put', 'token', '--value-file', empty, '--value', 'leaks-to-history', '--scope', 's'),
    ).rejects.toThrow(/unknown option '--value'/);
    await expect(run('put', 'token', '--value-file', empty, '--scope', 's')).rejects.toThrow(
      /is empty: a secret needs a value/,
    );
    await expect(run('put', 'token', '--value-file', empty)).rejects.toThrow(/--scope/);
    expect(await store.latest('acme', 'token')).toBeUndefined();
  });
});
