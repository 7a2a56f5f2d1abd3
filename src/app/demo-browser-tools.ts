import type { Gateway } from './gateway.js';

const TENANT = 'acme';

/**
 * `demo/browse@1.0.0`: a `read` browser tool that may only go to pages, read them and take
 * screenshots. Its lease's egress is the gateway's allow-list, which holds the demo ticket
 * service, so it browses the ticket board (`http://127.0.0.1:PORT/`) and nothing else local.
 */
export const demoBrowse = {
  id: 'demo/browse',
  version: '1.0.0',
  kind: 'browser',
  title: 'Browse',
  description:
    'Opens pages in a sandboxed Chromium and reads them: steps goto {url}, extract {selector, attribute?}, screenshot {fullPage?}. Answers each step, the final URL and title; screenshots as PNG.',
  inputSchema: {
    type: 'object',
    required: ['steps'],
    additionalProperties: false,
    properties: {
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        items: {
          type: 'object',
          required: ['action'],
          properties: {
            action: { enum: ['goto', 'extract', 'screenshot'] },
            url: { type: 'string', format: 'uri' },
            selector: { type: 'string' },
            attribute: { type: 'string' },
            fullPage: { type: 'boolean' },
          },
        },
      },
    },
  },
  sideEffect: { class: 'read' },
  execution: {
    allowedActions: ['goto', 'extract', 'screenshot'],
    viewport: { width: 1280, height: 800 },
    maxSteps: 20,
  },
  // Chromium runs many threads (cgroup v1 counts each toward pids) and wants more than a shell.
  sandbox: { memoryMb: 1024, pids: 1024 },
  timeoutMs: 60_000,
};

/**
 * `demo/web-form@1.0.0`: a `shared-write` browser tool that signs in on the ticket board with the
 * brokered `tickets-password` and fills and submits forms there (the new-ticket form). Its class
 * makes each call wait for a reviewer; the password is typed only into the password field and is
 * never on the record.
 */
export const demoWebForm = {
  id: 'demo/web-form',
  version: '1.0.0',
  kind: 'browser',
  title: 'Fill a web form',
  description:
    'Fills and submits forms in a sandboxed Chromium: steps goto {url}, fill {selector, value | secret: "tickets-password"}, select {selector, value}, click {selector}, press {key, selector?}, waitFor {selector | url}, extract {selector, attribute?}, screenshot {fullPage?}. To open a ticket on the board: sign in at /login (#password from the secret), then /tickets/new (#ticket-title, #ticket-body, #create). Each call waits for a reviewer.',
  inputSchema: {
    type: 'object',
    required: ['steps'],
    additionalProperties: false,
    properties: {
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: 30,
        items: {
          type: 'object',
          required: ['action'],
          properties: {
            action: {
              enum: [
                'goto',
                'fill',
                'select',
                'click',
                'press',
                'waitFor',
                'extract',
                'screenshot',
              ],
            },
            url: { type: 'string' },
            selector: { type: 'string' },
            value: { type: 'string' },
            secret: { type: 'string' },
            key: { type: 'string' },
            attribute: { type: 'string' },
            fullPage: { type: 'boolean' },
          },
        },
      },
    },
  },
  sideEffect: { class: 'shared-write' },
  execution: {
    allowedActions: [
      'goto',
      'fill',
      'select',
      'click',
      'press',
      'waitFor',
      'extract',
      'screenshot',
    ],
    viewport: { width: 1280, height: 800 },
    maxSteps: 30,
  },
  sandbox: { memoryMb: 1024, pids: 1024 },
  timeoutMs: 60_000,
};

/**
 * `demo/desktop@1.0.0`: computer use on an xterm in the attempt's sandbox, so commands typed into
 * it act in the workspace (`workspace-write`). Its desktop lives as long as the attempt's lease.
 */
export const demoDesktop = {
  id: 'demo/desktop',
  version: '1.0.0',
  kind: 'computer-use',
  title: 'Desktop',
  description:
    'A terminal (xterm) on a 1024×768 virtual display in a sandbox; its shell works in /workspace. Actions: screenshot, left_click, right_click, double_click, mouse_move {coordinate: [x, y]}, left_click_drag {start_coordinate?, coordinate}, type {text}, key {text: e.g. "Return", "ctrl+c"}, scroll {coordinate, direction, amount?}, wait {duration?}, cursor_position. Answers each action and a screenshot (PNG) after them. Calls with one runId and attemptId share the desktop.',
  inputSchema: {
    type: 'object',
    required: ['actions'],
    additionalProperties: false,
    properties: {
      actions: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        items: { type: 'object', required: ['action'], properties: { action: { type: 'string' } } },
      },
    },
  },
  sideEffect: { class: 'workspace-write' },
  execution: {
    application: ['xterm', '-maximized', '-bg', 'white', '-fg', 'black'],
    allowedActions: [
      'screenshot',
      'left_click',
      'right_click',
      'double_click',
      'mouse_move',
      'left_click_drag',
      'type',
      'key',
      'scroll',
      'wait',
      'cursor_position',
    ],
    display: { width: 1024, height: 768 },
    maxActions: 20,
  },
  sandbox: { memoryMb: 512, pids: 256 },
  timeoutMs: 60_000,
};

/**
 * Publishes `demo/browse@1.0.0`, `demo/web-form@1.0.0` and `demo/desktop@1.0.0` (their
 * descriptors validate on every gateway; without a sandbox their calls fail before any effect).
 * Safe to repeat.
 * @param board the demo ticket service's URL: the only origin whose pages get its password
 * @returns the tools, for the demo agent's closure
 */
export async function seedDemoBrowserTools(
  g: Gateway,
  actor: string,
  board: string,
): Promise<{ id: string; version: string }[]> {
  const refs: { id: string; version: string }[] = [];
  // The board's password is typed only into the board's own pages.
  const webForm = {
    ...demoWebForm,
    credentials: [
      {
        ref: 'tickets-password',
        scope: 'tickets',
        inject: { env: 'TICKETS_PASSWORD', origin: new URL(board).origin },
      },
    ],
  };
  for (const descriptor of [demoBrowse, webForm, demoDesktop]) {
    const ref = { id: descriptor.id, version: descriptor.version };
    refs.push(ref);
    if (g.registry.tool(TENANT, ref.id, ref.version)) continue;
    const data = { assetId: ref.id, version: ref.version, descriptor };
    const event = { id: `demo:${ref.id}@${ref.version}`, type: 'AssetReleasePublished', data };
    await g.registry.applyEvents(
      TENANT,
      [{ ...event, data: { ...data, inFlightPolicy: 'finish' } }],
      actor,
    );
  }
  return refs;
}
