import { setTimeout as sleep } from 'node:timers/promises';
import { sha256Hex } from '../core/index.js';
import type { NativeExecutor } from '../executors/index.js';

/** The native handlers behind the demo tools. */
export function registerDemoHandlers(native: NativeExecutor): void {
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

/** The release events that publish the demo tools and the demo agent release. */
export const demoReleaseEvents: unknown[] = [
  ...[echo, proposeChange, sleepTool].map((d) => ({
    id: `demo:${d.id}@${d.version}`,
    type: 'AssetReleasePublished',
    data: { assetId: d.id, version: d.version, descriptor: d, inFlightPolicy: 'finish' },
  })),
  {
    id: 'demo:agent/demo-agent@1.0.0',
    type: 'AgentReleasePublished',
    data: {
      agentId: 'demo-agent',
      version: '1.0.0',
      closure: [echo, proposeChange, sleepTool].map((d) => ({ id: d.id, version: d.version })),
      policy: { maxClass: 'production' },
    },
  },
];
