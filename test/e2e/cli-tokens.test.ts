import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import type { CliRun } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

/** `gatehouse principals add|list` and `gatehouse tokens list|create|revoke|rotate`, end to end. */

let g: DemoGateway;

beforeAll(async () => {
  ensureBuilt();
  g = await startDemoGateway({ listen: true });
}, 60_000);
afterAll(async () => {
  await g?.close();
});

const as = (token: string, ...args: string[]): Promise<CliRun> =>
  runCli(args, { GATEHOUSE_URL: g.url!, GATEHOUSE_TOKEN: token });
const show = (r: CliRun) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

async function ok(token: string, ...args: string[]): Promise<string> {
  const r = await as(token, ...args);
  expect(r.code, show(r)).toBe(0);
  return r.stdout;
}

interface Made {
  token: { id: string; expiresAt: string; label: string | null; status: string };
  secret: string;
}

describe('gatehouse principals and tokens', () => {
  it('adds a principal with an expiring token, lists, rotates and revokes tokens; never prints a secret in a list', async () => {
    const admin = g.tokens.admin;
    const before = Date.now();
    const added = JSON.parse(
      await ok(
        admin,
        'principals',
        'add',
        'ci-bot',
        '--role',
        'reviewer',
        '--ttl',
        '2h',
        '--label',
        'ci',
      ),
    ) as {
      principal: { id: string; roles: string[] };
      token: string;
      tokenInfo: Made['token'];
    };
    expect(added.principal.roles).toEqual(['reviewer']);
    expect(added.tokenInfo.label).toBe('ci');
    const expires = Date.parse(added.tokenInfo.expiresAt) - before;
    expect(expires).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(expires).toBeLessThanOrEqual(2 * 3_600_000 + 60_000);
    expect(await ok(admin, 'principals', 'list')).toMatch(
      new RegExp(`^${added.principal.id}  ci-bot +reviewer`, 'm'),
    );

    // The principal lists its own tokens: one line each, with no secret; --json neither.
    const bot = added.token;
    const listed = await ok(bot, 'tokens', 'list');
    expect(listed).toMatch(
      new RegExp(
        `^${added.tokenInfo.id}  active +ci-bot \\(reviewer\\) +expires ${added.tokenInfo.expiresAt}  last used \\S+  ci$`,
        'm',
      ),
    );
    expect(listed.trim().split('\n')).toHaveLength(1);
    const json = await ok(bot, 'tokens', 'list', '--json');
    expect(json).not.toContain(bot);
    expect((JSON.parse(json) as { tokens: { id: string }[] }).tokens.map((t) => t.id)).toEqual([
      added.tokenInfo.id,
    ]);
    // An admin's list holds the tenant's tokens, the demo's among them.
    expect((await ok(admin, 'tokens', 'list')).trim().split('\n').length).toBeGreaterThan(5);

    // An admin makes a second token for it, with its own expiry and label.
    const second = JSON.parse(
      await ok(
        admin,
        'tokens',
        'create',
        '--principal',
        added.principal.id,
        '--expires-at',
        new Date(Date.now() + 3_600_000).toISOString(),
        '--label',
        'laptop',
      ),
    ) as Made;
    expect(second.token.label).toBe('laptop');
    expect(await ok(second.secret, 'tokens', 'list')).toContain(second.token.id);

    // Rotation: a new secret works, the old one answers 401 at once.
    const rotated = JSON.parse(await ok(bot, 'tokens', 'rotate', added.tokenInfo.id)) as Made;
    expect(rotated.token.id).not.toBe(added.tokenInfo.id);
    expect(rotated.token.expiresAt).toBe(added.tokenInfo.expiresAt);
    const old = await as(bot, 'tokens', 'list');
    expect(old.code, show(old)).toBe(3);
    expect(old.stderr).toContain('401 UNAUTHENTICATED');
    await ok(rotated.secret, 'tokens', 'list');

    // Someone else's token is not there for it; the admin's is.
    const all = JSON.parse(await ok(admin, 'tokens', 'list', '--json')) as {
      tokens: { id: string; principal: { name: string } }[];
    };
    const adminTokenId = all.tokens.find((t) => t.principal.name !== 'ci-bot')!.id;
    const foreign = await as(rotated.secret, 'tokens', 'revoke', adminTokenId);
    expect(foreign.code, show(foreign)).toBe(3);
    expect(foreign.stderr).toContain('404 NOT_FOUND');

    // Revocation by an admin, with a reason: at once.
    expect(await ok(admin, 'tokens', 'revoke', second.token.id, '--reason', 'laptop lost')).toMatch(
      new RegExp(`^token ${second.token.id} is revoked \\(since \\S+\\)\\n$`),
    );
    const revoked = await as(second.secret, 'tokens', 'list');
    expect(revoked.code, show(revoked)).toBe(3);
    expect(revoked.stderr).toMatch(/401 UNAUTHENTICATED.*revoked/);
  });

  it('refuses a wrong command line before sending anything (2), and bad values with the field named (3)', async () => {
    const admin = g.tokens.admin;
    const both = await as(
      admin,
      'tokens',
      'create',
      '--principal',
      'x',
      '--ttl',
      '1h',
      '--expires-at',
      '2030-01-01T00:00:00Z',
    );
    expect(both.code, show(both)).toBe(2);
    expect(both.stderr).toContain('--ttl or --expires-at');
    const overlap = await as(admin, 'tokens', 'rotate', 'x', '--overlap', 'soon');
    expect(overlap.code, show(overlap)).toBe(2);
    expect(overlap.stderr).toContain('--overlap takes whole seconds');
    const me = g.gateway.directory.authenticate(admin)!.id;
    const long = await as(admin, 'tokens', 'create', '--principal', me, '--ttl', '400d');
    expect(long.code, show(long)).toBe(3);
    expect(long.stderr).toMatch(/400 INVALID_INPUT/);
    expect(long.stderr).toContain('/ttl');
    const nobody = await as(admin, 'tokens', 'create', '--principal', 'no-such-principal');
    expect(nobody.code, show(nobody)).toBe(3);
    expect(nobody.stderr).toContain('404 NOT_FOUND');
  });
});
