import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/cli.js';

let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-json-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// No gateway listens there: each refusal must come before any request.
const env = { GATEHOUSE_URL: 'http://127.0.0.1:9', GATEHOUSE_TOKEN: 'unused' };

describe('JSON the command line reads', () => {
  it('refuses a file the gateway would refuse, naming where, before sending it (exit 2)', async () => {
    const deep = join(dir, 'deep.json');
    writeFileSync(deep, `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    const r = await runCli(['events', 'publish', deep], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: ${deep} is refused at ${'/0'.repeat(64)}: objects and arrays nest deeper than 64 levels here (the limit).\n`,
    );
    const inf = join(dir, 'inf.json');
    writeFileSync(inf, '{"id":"e","sequence":1e400}');
    const r2 = await runCli(['events', 'publish', inf], env);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/is refused at \/sequence: the number 1e400 is too large/);
  });

  it('refuses an --input with a repeated member name', async () => {
    const r = await runCli(['invoke', 'demo/echo@1.0.0', '--input', '{"a":1,"a":2}'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: --input is refused at /a: the member name "a" is repeated.\n');
  });
});
