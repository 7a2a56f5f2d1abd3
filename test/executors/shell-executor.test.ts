import { describe, expect, it } from 'vitest';
import { ErrorCode, GatehouseError } from '../../src/core/index.js';
import { ShellExecutor } from '../../src/executors/index.js';
import type {
  ExecutionLease,
  ExecutionRequest,
  OutputCapture,
} from '../../src/invocation/index.js';
import type { Sandbox, SandboxSpec } from '../../src/sandbox/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';

/** A sandbox whose run() does what `run` says, keeping the spec it was given. */
function sandboxThat(run: (spec: SandboxSpec) => Promise<never>): Sandbox & { spec?: SandboxSpec } {
  const s: Sandbox & { spec?: SandboxSpec } = {
    check: () => Promise.resolve(null),
    run: (spec) => {
      s.spec = spec;
      return run(spec);
    },
    reapOrphans: () => Promise.resolve([]),
    reapLeftByOthers: () => Promise.resolve([]),
    close: () => Promise.resolve(),
  };
  return s;
}

const lease: ExecutionLease = {
  id: 'lease-1',
  attempt: false,
  workspace: '/nowhere/lease-1',
  freshWorkspace: true,
  prepareWorkspace: () => Promise.resolve(),
  readOnlyMounts: [],
  limits: { memoryBytes: 2 ** 26, cpus: 1, pids: 16, timeoutMs: 1_000 },
  egressSocket: null,
  env: {},
  files: [],
};

function request(): ExecutionRequest {
  const capture = { write: () => undefined, end: () => Promise.resolve({ text: '', raw: '' }) };
  return {
    descriptor: {
      kind: 'shell',
      execution: { argv: ['/bin/sh', '-c', 'true'] },
    } as unknown as ToolDescriptor,
    input: {},
    lease,
    signal: new AbortController().signal,
    capture: () => capture as unknown as OutputCapture,
  } as unknown as ExecutionRequest;
}

describe('the shell executor', () => {
  it('asks for its workspace on demand and hands the sandbox the way to make it', async () => {
    expect(new ShellExecutor().lease).toEqual({ kind: 'sandbox', workspace: 'on-demand' });
    const sandbox = sandboxThat(() =>
      Promise.reject(new GatehouseError(ErrorCode.UNAVAILABLE, 'x')),
    );
    await new ShellExecutor(sandbox).execute(request());
    expect(sandbox.spec?.prepareWorkspace).toBe(lease.prepareWorkspace);
    expect(sandbox.spec?.freshWorkspace).toBe(true);
  });

  it('reports a run the sandbox refused (its workspace could not be made) as failed before any effect', async () => {
    const sandbox = sandboxThat(() =>
      Promise.reject(
        new GatehouseError(ErrorCode.UNAVAILABLE, 'Cannot mount the workspace of a lease'),
      ),
    );
    const report = await new ShellExecutor(sandbox).execute(request());
    expect(report).toMatchObject({
      status: 'stopped',
      code: 'UNAVAILABLE',
      effectMayHaveStarted: false,
    });
    expect(report.status === 'stopped' && report.message).toMatch(/Cannot mount the workspace/);
  });

  it('still throws what is not the sandbox refusing the run (a bug)', async () => {
    const sandbox = sandboxThat(() => Promise.reject(new TypeError('a bug')));
    await expect(new ShellExecutor(sandbox).execute(request())).rejects.toThrow('a bug');
  });
});
