import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli.js';

const APP = fileURLToPath(new URL('../../dist/app/index.js', import.meta.url));

/** The CommonJS modules a fresh process holds once it has loaded the gateway's code. */
function loadedByGateway(): string[] {
  const script = `
    const { createRequire } = await import('node:module');
    await import(${JSON.stringify(APP)});
    process.stdout.write(JSON.stringify(Object.keys(createRequire(${JSON.stringify(APP)}).cache)));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as string[];
}

describe('what a gateway loads when it starts', () => {
  beforeAll(() => ensureBuilt());

  it('leaves the browser driver and the trace exporters for when they are used', () => {
    const loaded = loadedByGateway();
    // Sanity: the loader does list the CommonJS packages the gateway needs.
    expect(loaded.some((f) => f.includes('/node_modules/fastify/'))).toBe(true);
    // Each is hundreds of files, a large share of a gateway's start; a browser call and tracing
    // configured load them (see the browser and tracing tests).
    for (const lazy of [
      '/node_modules/playwright-core/',
      '/node_modules/@opentelemetry/exporter-trace-otlp-http/',
      '/node_modules/@opentelemetry/exporter-trace-otlp-proto/',
      '/node_modules/@opentelemetry/sdk-trace-base/',
    ])
      expect(loaded.filter((f) => f.includes(lazy))).toEqual([]);
  });
});
