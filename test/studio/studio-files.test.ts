import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { STUDIO_CSP } from '../../src/http/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await g?.close();
  g = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** What the marker file beside the built folder holds: no answer may ever contain it. */
const MARKER = 'outside-the-studio-folder-7f3a';

/**
 * A built Studio of two files, enough to check how they are served, in `<tmp>/build`, with a
 * marker file beside that folder (`<tmp>/secret.txt`) for traversal to find if it could.
 */
function fakeBuild(): string {
  const parent = mkdtempSync(join(tmpdir(), 'gatehouse-studio-files-'));
  dirs.push(parent);
  writeFileSync(join(parent, 'secret.txt'), MARKER);
  const dir = join(parent, 'build');
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><script type="module" src="/studio/assets/main-abc123.js"></script>',
  );
  writeFileSync(join(dir, 'assets', 'main-abc123.js'), 'console.log(1)');
  writeFileSync(join(dir, 'signed-in.html'), '<!doctype html><title>signed-in shell</title>');
  return dir;
}

describe('serving the Studio at /studio', () => {
  it('serves index.html with a strict CSP for every page path, and hashed assets long-cached', async () => {
    g = await startDemoGateway({ config: { studioDir: fakeBuild() } });
    for (const path of ['/studio', '/studio/', '/studio/approvals', '/studio/invocations/inv-1']) {
      const res = await g.inject<string>('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.body).toContain('/studio/assets/main-abc123.js');
    }
    const csp = String((await g.inject('GET', '/studio/')).headers['content-security-policy']);
    expect(csp).toBe(STUDIO_CSP);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');

    const js = await g.inject<string>('GET', '/studio/assets/main-abc123.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toBe('console.log(1)');
  });

  it('sends the page with the sign-in form without a live session, the shell with one', async () => {
    g = await startDemoGateway({ config: { studioDir: fakeBuild() } });
    const signedIn = await g.inject<unknown>('POST', '/v1/sessions', { token: g.tokens.reviewer });
    expect(signedIn.status).toBe(201);
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    for (const path of [
      '/studio',
      '/studio/approvals',
      '/studio/index.html',
      '/studio/signed-in.html',
    ]) {
      const without = await g.inject<string>('GET', path);
      expect(without.body, path).toContain('/studio/assets/main-abc123.js');
      expect(without.headers['vary'], path).toBe('cookie');
      const stale = await g.inject<string>('GET', path, {
        headers: { cookie: 'gatehouse_session=not-a-session' },
      });
      expect(stale.body, path).toContain('/studio/assets/main-abc123.js');
      const live = await g.inject<string>('GET', path, { headers: { cookie } });
      expect(live.status, path).toBe(200);
      expect(live.body, path).toContain('signed-in shell');
      expect(live.headers['vary'], path).toBe('cookie');
      expect(live.headers['content-security-policy'], path).toBe(STUDIO_CSP);
    }
  });

  it('answers 404 for an asset it does not have, and never reads outside its folder', async () => {
    const build = fakeBuild();
    expect(readFileSync(join(build, '..', 'secret.txt'), 'utf8')).toBe(MARKER);
    g = await startDemoGateway({ config: { studioDir: build } });
    expect((await g.inject('GET', '/studio/assets/old-999.js')).status).toBe(404);
    for (const path of [
      '/studio/../secret.txt',
      '/studio/%2e%2e/secret.txt',
      '/studio/..%2fsecret.txt',
      '/studio/%2e%2e%2fsecret.txt',
      '/studio/assets/../../secret.txt',
      '/studio/assets/..%2f..%2fsecret.txt',
      '/studio/assets/%2e%2e/%2e%2e/secret.txt',
      '/studio/assets/..%5c..%5csecret.txt',
    ]) {
      const res = await g.inject<string>('GET', path);
      expect(String(res.body), path).not.toContain(MARKER);
    }
  });

  it('says how to build it when it is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'gatehouse-studio-none-'));
    dirs.push(empty);
    g = await startDemoGateway({ config: { studioDir: empty } });
    const res = await g.inject<string>('GET', '/studio');
    expect(res.status).toBe(503);
    expect(res.body).toContain('npm run build');
  });
});
