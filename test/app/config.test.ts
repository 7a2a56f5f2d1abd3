import { describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { loadConfig } from '../../src/app/index.js';

const load = (env: NodeJS.ProcessEnv) => () =>
  loadConfig({ dataDir: '/tmp/gatehouse-config-test' }, env);

describe('configuration from the environment', () => {
  it('reads the egress allow-list, trimmed, empty entries dropped', () => {
    const config = load({ GATEHOUSE_EGRESS_ALLOW: ' github.com, ,127.0.0.1:8080,*.example.com' })();
    expect(config.sandbox.egressAllow).toEqual(['github.com', '127.0.0.1:8080', '*.example.com']);
  });

  it('refuses a malformed allow-list entry at start, naming it', () => {
    let err: unknown;
    try {
      load({ GATEHOUSE_EGRESS_ALLOW: 'github.com,bad host!:80' })();
    } catch (e) {
      err = e;
    }
    expect(isGatehouseError(err) && err.code).toBe('INVALID_INPUT');
    expect((err as Error).message).toMatch(/^GATEHOUSE_EGRESS_ALLOW: .*"bad host!:80"/);
  });

  it('refuses a pool setting that is not a number', () => {
    expect(load({ GATEHOUSE_POOL: 'cpus=many' })).toThrow(
      /GATEHOUSE_POOL cpus must be a non-negative number/,
    );
  });
});
