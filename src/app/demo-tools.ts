import { appendFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { sha256Hex } from '../core/index.js';
import type { NativeExecutor } from '../executors/index.js';

/**
 * The native handlers behind the demo tools. `deployLog` is where demo/flaky-deploy records its
 * effects, so an operator has evidence to resolve an Uncertain deploy with.
 */
export function registerDemoHandlers(native: NativeExecutor, deployLog: string): void {
  native
    .register('demo.echo', (input) =>
      Promise.resolve({ message: (input as { message: string }).message }),
    )
    .register('demo.propose-change', (input) => {
      const { title, diff } = input as { title: string; diff: string };
      return Promise.resolve({
        changeId: `chg-${sha256Hex(`${title}\n${diff}`).slice(0, 12)}`,
        title,
      });
    })
    .register('demo.flaky-deploy', async (input, ctx) => {
      const { service, version, dropConnection } = input as {
        service: string;
        version: string;
        dropConnection?: boolean;
      };
      const line = {
        invocationId: ctx.invocationId,
        service,
        version,
        environment: ctx.environment,
        at: new Date().toISOString(),
      };
      await appendFile(deployLog, `${JSON.stringify(line)}\n`);
      if (dropConnection)
        throw new Error(
          `connection to the deploy service dropped after the request was sent (deploy of ${service} ${version} may have happened)`,
        );
      return { deployed: true, service, version };
    })
    .register('demo.sleep', async (input, ctx) => {
      const { ms } = input as { ms: number };
      await sleep(ms, undefined, { signal: ctx.signal });
      return { slept: ms };
    });
}

const echo = {
  id: 'demo/echo',
  version: '1.0.0',
  kind: 'native',
  title: 'Echo',
  description: 'Returns the message it is given. Reads nothing, changes nothing.',
  inputSchema: {
    type: 'object',
    required: ['message'],
    additionalProperties: false,
    properties: { message: { type: 'string', maxLength: 10000 } },
  },
  sideEffect: { class: 'read' },
  execution: { handler: 'demo.echo' },
};

const proposeChange = {
  id: 'demo/propose-change',
  version: '1.0.0',
  kind: 'native',
  title: 'Propose a change',
  description: 'Opens a change proposal (like a pull request) and returns its id.',
  inputSchema: {
    type: 'object',
    required: ['title', 'diff'],
    additionalProperties: false,
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 200 },
      diff: { type: 'string', minLength: 1 },
      target: {
        type: 'string',
        description: 'Branch the change targets; "main" raises the class to production.',
      },
    },
  },
  sideEffect: {
    class: 'shared-write',
    rules: [
      {
        pointer: '/target',
        equals: 'main',
        raiseTo: 'production',
        reason: 'changes to main ship to production',
      },
    ],
  },
  execution: { handler: 'demo.propose-change' },
};

const sleepTool = {
  id: 'demo/sleep',
  version: '1.0.0',
  kind: 'native',
  title: 'Sleep',
  description:
    'Waits the given milliseconds inside the workspace, then returns. For trying timeouts and crashes.',
  inputSchema: {
    type: 'object',
    required: ['ms'],
    additionalProperties: false,
    properties: { ms: { type: 'integer', minimum: 0, maximum: 600000 } },
  },
  sideEffect: { class: 'workspace-write' },
  execution: { handler: 'demo.sleep' },
  timeoutMs: 600000,
};

const flakyDeploy = {
  id: 'demo/flaky-deploy',
  version: '1.0.0',
  kind: 'native',
  title: 'Deploy (flaky)',
  description:
    'Deploys a service version to production and records it in DATA/demo-deployments.jsonl. With dropConnection: true it drops the call after the deploy happened, so its effect is Uncertain.',
  inputSchema: {
    type: 'object',
    required: ['service', 'version'],
    additionalProperties: false,
    properties: {
      service: { type: 'string', minLength: 1 },
      version: { type: 'string', minLength: 1 },
      dropConnection: { type: 'boolean' },
    },
  },
  sideEffect: { class: 'production' },
  execution: { handler: 'demo.flaky-deploy' },
};

const sh = {
  id: 'demo/sh',
  version: '1.0.0',
  kind: 'shell',
  title: 'Shell',
  description:
    'Runs `sh -c SCRIPT` in a sandbox: its own namespaces, an unprivileged user, a writable /workspace only, cgroup limits, egress only through the proxy. $DEMO_TOKEN holds a demo secret, so you can watch it being redacted. Try to break out.',
  inputSchema: {
    type: 'object',
    required: ['script'],
    additionalProperties: false,
    properties: { script: { type: 'string', minLength: 1, maxLength: 20000 } },
  },
  sideEffect: { class: 'workspace-write' },
  execution: { argv: ['sh', '-c', '{/script}'] },
  credentials: [{ ref: 'demo-token', scope: 'demo', inject: { env: 'DEMO_TOKEN' } }],
  sandbox: { cpus: 0.5, memoryMb: 256, pids: 64 },
  timeoutMs: 10000,
};

const gitLog = {
  id: 'demo/git-log',
  version: '1.0.0',
  kind: 'shell',
  title: 'Git log',
  description: 'Shows the last commits of the demo repository, from an isolated worktree of it.',
  inputSchema: {
    type: 'object',
    required: ['count'],
    additionalProperties: false,
    properties: { count: { type: 'integer', minimum: 1, maximum: 100 } },
  },
  sideEffect: { class: 'read' },
  execution: {
    argv: ['git', 'log', '--oneline', '-n', '{/count}'],
    // The worktree belongs to the sandbox user, the repository to the gateway: trust it.
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' },
  },
  sandbox: { worktree: { repository: 'demo', ref: 'HEAD' } },
  timeoutMs: 10000,
};

const demoTools = [echo, proposeChange, sleepTool, flakyDeploy, sh, gitLog];

/** The release events that publish the native and shell demo tools. */
export const demoToolEvents: unknown[] = demoTools.map((d) => ({
  id: `demo:${d.id}@${d.version}`,
  type: 'AssetReleasePublished',
  data: { assetId: d.id, version: d.version, descriptor: d, inFlightPolicy: 'finish' },
}));

/** The release event of `demo-agent@1.0.0`, whose closure holds the demo tools and `extra`. */
export function demoAgentEvent(extra: { id: string; version: string }[]): unknown {
  return {
    id: 'demo:agent/demo-agent@1.0.0',
    type: 'AgentReleasePublished',
    data: {
      agentId: 'demo-agent',
      version: '1.0.0',
      closure: [...demoTools.map((d) => ({ id: d.id, version: d.version })), ...extra],
      policy: { maxClass: 'production' },
    },
  };
}
