import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

describe('workspace size', () => {
  it('a call cannot write more than its workspace bound; the host disk is untouched and the mount goes with the lease', async () => {
    g = await startDemoGateway({ sandbox: { workspaceMb: 4 } });
    const res = await g.invoke(
      g.tokens.agent,
      'disk-1',
      call('demo/sh', {
        script: 'head -c 20000000 /dev/zero > big; echo "rc=$?"; wc -c < big; echo "$PWD: $(ls)"',
      }),
    );
    const r = res.body;
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    const out = r.output as { stdout: string; stderr: string };
    expect(out.stdout).toMatch(/^rc=1\n4194304\n/);
    expect(out.stderr).toMatch(/No space left on device/);
    const lease = (r.lease as { id: string }).id;
    expect(existsSync(join(g.sandboxRoot, 'workspaces', lease))).toBe(false);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(lease);
  });
});
