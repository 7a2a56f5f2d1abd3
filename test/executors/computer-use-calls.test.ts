import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngSize } from '../../src/executors/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { skipWithout } from '../helpers/prerequisites.js';
import {
  cgroupDirsStartingWith,
  processesMatching,
  publishAgent,
  verifiedReceipt,
} from '../helpers/sandbox-tools.js';
import { desktopTool, missingDesktop } from './computer-use-fixture.js';

/** An unusual size, so this file's Xvfb is told from any other on the machine by its command line. */
const DISPLAY = { width: 808, height: 606 };
const XVFB = `${DISPLAY.width}x${DISPLAY.height}x24`;
/** A title no other xterm has, to find this file's by its command line. */
const TITLE = `gh-desktop-${randomBytes(6).toString('hex')}`;
const ATTEMPT_TTL_MS = 2_000;
/** A real screen twice the display, and on it, away from the display's own corner, an xev window. */
const SCREEN = { width: DISPLAY.width * 2, height: DISPLAY.height * 2 };
const XEV = { x: 1300, y: 1000, width: 200, height: 150 };

let g: DemoGateway;
let agent: string;
/** A loopback page the net tool's egress lists, and a port it does not. */
let site: Server;
let other: Server;
/** The paths the listed site was asked for. */
const siteRequests: string[] = [];
const portOf = (s: Server) => (s.address() as AddressInfo).port;

interface Shot {
  mediaType: string;
  artifact: string;
  width: number;
  height: number;
}
interface DesktopOutput {
  actions: Record<string, unknown>[];
  screenshot: Shot;
  display: { width: number; height: number };
  desktop: 'started' | 'kept';
}

const unavailable = skipWithout('Xvfb, xdotool, ImageMagick and xterm', missingDesktop());

describe.skipIf(unavailable)('computer-use tools through the gateway', () => {
  beforeAll(async () => {
    site = createServer((req, res) => {
      siteRequests.push(req.url ?? '');
      res.end('from-the-listed-site');
    });
    other = createServer((_req, res) => res.end('the-unlisted-secret'));
    for (const s of [site, other]) await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
    // A short attempt lease, and no periodic reaper pass during the test: the test runs it.
    g = await startDemoGateway({
      listen: true,
      sandbox: { attemptTtlMs: ATTEMPT_TTL_MS, reapIntervalMs: 3_600_000 },
    });
    agent = await publishAgent(g, 'desktop-agent', [
      desktopTool('test/desktop', {
        application: ['xterm', '-title', TITLE, '-maximized'],
        allowedActions: ['screenshot', 'type', 'key', 'left_click', 'wait', 'cursor_position'],
        display: DISPLAY,
      }),
      desktopTool(
        'test/desktop-slow',
        {
          application: ['xterm', '-title', TITLE, '-maximized'],
          allowedActions: ['type', 'key', 'wait'],
          display: DISPLAY,
        },
        { timeoutMs: 6_000 },
      ),
      desktopTool(
        'test/desktop-net',
        {
          application: ['xterm', '-title', TITLE, '-maximized'],
          allowedActions: ['type', 'key', 'wait'],
          display: DISPLAY,
        },
        { sandbox: { memoryMb: 512, pids: 256, egress: [`127.0.0.1:${portOf(site)}`] } },
      ),
      desktopTool('test/desktop-scaled', {
        // xev notes each button press on its window, with where it was on the real screen.
        application: [
          '/bin/sh',
          '-c',
          `exec xev -event button -geometry ${XEV.width}x${XEV.height}+${XEV.x}+${XEV.y} >/workspace/events`,
        ],
        allowedActions: ['left_click', 'cursor_position'],
        display: DISPLAY,
        screen: SCREEN,
      }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await g?.close();
    for (const s of [site, other]) s?.close();
  });

  let n = 0;
  async function act(actions: unknown[], attempt?: string): Promise<InvocationRecord> {
    n += 1;
    const res = await g.invoke(agent, `desktop-${n}`, {
      ...(call('test/desktop', { actions }) as object),
      ...(attempt === undefined ? {} : { runId: 'run-1', attemptId: attempt }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }
  const out = (r: InvocationRecord): DesktopOutput => r.output as DesktopOutput;
  /** This file's Xvfb and xterm processes (not the driver, whose command line names both). */
  const ours = () =>
    [...processesMatching(`Xvfb :0 -screen 0 ${XVFB}`), ...processesMatching(TITLE)].filter(
      (p) => p.cmdline.startsWith('Xvfb ') || p.cmdline.startsWith('xterm '),
    );
  const desktopCgroups = (leaseId: string) => cgroupDirsStartingWith(`${leaseId}.desktop-`);
  const artifact = (sha: string) =>
    readFileSync(join(g.dataDir, 'artifacts', sha.slice(0, 2), sha));

  it('types a command into the xterm: the file is in the workspace; the answer has a PNG screenshot of the declared size', async () => {
    const r = await act(
      [
        { action: 'type', text: 'echo hi > /workspace/x' },
        { action: 'key', text: 'Return' },
        { action: 'wait', duration: 1 },
      ],
      'attempt-a',
    );
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    const o = out(r);
    expect(o.desktop).toBe('started');
    expect(o.actions).toEqual([
      { action: 'type', characters: 22 },
      { action: 'key', text: 'Return' },
      { action: 'wait', duration: 1 },
    ]);
    expect(o.screenshot).toMatchObject({ mediaType: 'image/png', ...DISPLAY });
    const png = artifact(o.screenshot.artifact);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
    expect(pngSize(png)).toEqual(DISPLAY);
    const workspace = join(g.sandboxRoot, 'workspaces', String(r.lease?.id));
    expect(readFileSync(join(workspace, 'x'), 'utf8')).toBe('hi\n');
  }, 60_000);

  it('the calls of one attempt share the desktop; it is gone (processes and cgroups) once the lease ends', async () => {
    const first = await act([{ action: 'type', text: 'cd /workspace; A=kept' }], 'attempt-b');
    expect(first.status, JSON.stringify(first.error)).toBe('observed');
    const running = ours();
    expect(running.length, 'Xvfb and xterm of this file run').toBeGreaterThanOrEqual(2);
    // The second call finishes the line the first typed: only one shell saw both halves.
    const second = await act(
      [
        { action: 'type', text: '; echo "$A" > shared' },
        { action: 'key', text: 'Return' },
        { action: 'wait', duration: 1 },
      ],
      'attempt-b',
    );
    expect(second.status, JSON.stringify(second.error)).toBe('observed');
    expect(out(second).desktop).toBe('kept');
    const leaseId = String(first.lease?.id);
    expect(second.lease?.id).toBe(leaseId);
    const workspace = join(g.sandboxRoot, 'workspaces', leaseId);
    expect(readFileSync(join(workspace, 'shared'), 'utf8')).toBe('kept\n');
    expect(
      ours()
        .map((p) => p.pid)
        .sort(),
    ).toEqual(running.map((p) => p.pid).sort());
    expect(desktopCgroups(leaseId).length).toBeGreaterThan(0);

    // The attempt lease expires; the reaper ends it, and its desktop with it.
    await sleep(ATTEMPT_TTL_MS + 200);
    const reaped = await g.gateway.execution.reaper!.runOnce();
    expect(reaped).toContain(leaseId);
    expect(ours()).toEqual([]);
    expect(desktopCgroups(leaseId)).toEqual([]);
    expect(existsSync(workspace)).toBe(false);
  }, 60_000);

  it('scales a larger real screen to the declared display: the screenshot has the declared size, a click lands where the model saw it', async () => {
    // The xev window spans x 1300–1499, y 1000–1149 of the screen: 650–749, 500–574 on the display.
    const target: [number, number] = [700, 530];
    n += 1;
    const res = await g.invoke(agent, `desktop-${n}`, {
      ...(call('test/desktop-scaled', {
        actions: [{ action: 'left_click', coordinate: target }, { action: 'cursor_position' }],
      }) as object),
      runId: 'run-1',
      attemptId: 'attempt-scaled',
    });
    const r = res.body;
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    const o = r.output as DesktopOutput & { screen: unknown };
    expect(o.display).toEqual(DISPLAY);
    expect(o.screen).toEqual(SCREEN);
    expect(o.actions[1]).toEqual({ action: 'cursor_position', coordinate: target });
    expect(o.screenshot).toMatchObject({ mediaType: 'image/png', ...DISPLAY });
    expect(pngSize(artifact(o.screenshot.artifact))).toEqual(DISPLAY);
    // Unscaled, [700, 530] would be far above and left of the window: xev would see nothing.
    const events = join(g.sandboxRoot, 'workspaces', String(r.lease?.id), 'events');
    let seen = '';
    for (let i = 0; i < 100 && !seen.includes('ButtonRelease'); i += 1) {
      seen = existsSync(events) ? readFileSync(events, 'utf8') : '';
      if (!seen.includes('ButtonRelease')) await sleep(20);
    }
    expect(seen).toMatch(/ButtonPress event.*\n.*root:\(1401,1061\).*\n.*button 1/);
  }, 60_000);

  it('a call outside an attempt has a desktop for that call only', async () => {
    await sleep(ATTEMPT_TTL_MS);
    await g.gateway.execution.reaper!.runOnce();
    expect(ours(), 'no desktop of an earlier attempt is left').toEqual([]);
    const r = await act([{ action: 'cursor_position' }]);
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    expect(out(r).actions[0]).toMatchObject({ action: 'cursor_position' });
    expect(out(r).desktop).toBe('started');
    expect(ours()).toEqual([]);
    expect(desktopCgroups(String(r.lease?.id))).toEqual([]);
  }, 60_000);

  it('a write-class call whose desktop times out after input was sent is uncertain, and its desktop is gone', async () => {
    n += 1;
    const res = await g.invoke(agent, `desktop-${n}`, {
      ...(call('test/desktop-slow', {
        actions: [
          { action: 'type', text: 'echo started > /workspace/y' },
          { action: 'key', text: 'Return' },
          { action: 'wait', duration: 10 },
        ],
      }) as object),
      runId: 'run-1',
      attemptId: 'attempt-slow',
    });
    const r = res.body;
    expect(r.status, JSON.stringify(r.error)).toBe('uncertain');
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toMatch(/an effect may have happened/);
    expect(desktopCgroups(String(r.lease?.id))).toEqual([]);
    expect(ours()).toEqual([]);
  }, 60_000);

  it("reaches only the lease's allow-list, through the running call's egress endpoint, with the decisions on its record; its mount table names no host path", async () => {
    const listed = `http://127.0.0.1:${portOf(site)}/`;
    const unlisted = `http://127.0.0.1:${portOf(other)}/`;
    n += 1;
    const res = await g.invoke(agent, `desktop-${n}`, {
      ...(call('test/desktop-net', {
        actions: [
          {
            action: 'type',
            text: `curl -s -o got ${listed}; curl -s -o other ${unlisted}; cat /proc/self/mountinfo >mounts`,
          },
          { action: 'key', text: 'Return' },
          { action: 'wait', duration: 3 },
        ],
      }) as object),
      runId: 'run-1',
      attemptId: 'attempt-net',
    });
    const r = res.body;
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    const workspace = join(g.sandboxRoot, 'workspaces', String(r.lease?.id));
    expect(readFileSync(join(workspace, 'got'), 'utf8')).toBe('from-the-listed-site');
    expect(
      existsSync(join(workspace, 'other')) ? readFileSync(join(workspace, 'other'), 'utf8') : '',
    ).not.toContain('the-unlisted-secret');
    expect(r.egress.map((e) => [e.port, e.allowed])).toEqual([
      [portOf(site), true],
      [portOf(other), false],
    ]);
    // The relay socket is bound from a tmpfs of the gateway's own: neither the sandbox directory,
    // the data directory, the gateway's directory nor the lease id shows.
    const mounts = readFileSync(join(workspace, 'mounts'), 'utf8');
    expect(mounts).toMatch(/ \/run\/gatehouse\/egress\.sock .* gatehouse-desktop /);
    for (const hidden of [g.sandboxRoot, g.dataDir, process.cwd(), String(r.lease?.id)]) {
      expect(mounts).not.toContain(hidden);
    }
  }, 60_000);

  it("records what a kept desktop tried between its attempt's calls on the next call's record and receipt, refused", async () => {
    // A background job of the xterm's shell (in the attempt of the test before, whose desktop is
    // kept) fetches a listed page.
    const between = `http://127.0.0.1:${portOf(site)}/between-calls`;
    const net = async (actions: unknown[]) => {
      n += 1;
      const res = await g.invoke(agent, `desktop-${n}`, {
        ...(call('test/desktop-net', { actions }) as object),
        runId: 'run-1',
        attemptId: 'attempt-net',
      });
      const r = res.body;
      expect(r.status, JSON.stringify(r.error)).toBe('observed');
      return r;
    };
    const first = await net([
      {
        action: 'type',
        text: `(until [ -e go ]; do sleep 0.05; done; curl -s -o late ${between}) &`,
      },
      { action: 'key', text: 'Return' },
    ]);
    expect(first.egress).toEqual([]);
    // The job fetches once the test says so, after the call has ended.
    const workspace = join(g.sandboxRoot, 'workspaces', String(first.lease?.id));
    writeFileSync(join(workspace, 'go'), '');
    const late = join(workspace, 'late');
    for (let i = 0; i < 150 && !existsSync(late); i += 1) await sleep(50);
    expect(readFileSync(late, 'utf8')).toMatch(/no call of this attempt is running/);
    expect(siteRequests).not.toContain('/between-calls');

    const second = await net([{ action: 'wait', duration: 0 }]);
    expect(second.egress).toEqual([
      {
        at: expect.any(String) as unknown,
        method: 'GET',
        host: '127.0.0.1',
        port: portOf(site),
        allowed: false,
        betweenCalls: true,
        reason: expect.stringMatching(
          /^between calls: no call of the attempt was running/,
        ) as unknown,
      },
    ]);
    expect(Date.parse(second.egress[0]!.at)).toBeLessThan(Date.parse(second.createdAt));
    const { predicate } = await verifiedReceipt(g, second.id);
    expect(predicate.egress).toEqual(second.egress);
    // Taken once: the call after has none.
    expect((await net([{ action: 'wait', duration: 0 }])).egress).toEqual([]);
  }, 60_000);

  it('answers an MCP client with the closing screenshot as an image content block', async () => {
    const { client } = await connectMcp(`${g.url!}/mcp`, agent);
    try {
      const result = await client.callTool({
        name: 'test_desktop__1_0_0',
        arguments: { actions: [{ action: 'left_click', coordinate: [400, 300] }] },
        _meta: { 'gatehouse/idempotencyKey': 'desktop-mcp-1' },
      });
      expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
      const content = result.content as { type: string; data?: string; mimeType?: string }[];
      expect(content.map((c) => c.type)).toEqual(['text', 'image']);
      expect(content[1]!.mimeType).toBe('image/png');
      const png = Buffer.from(content[1]!.data!, 'base64');
      expect(pngSize(png)).toEqual(DISPLAY);
      const shot = (result.structuredContent as DesktopOutput).screenshot;
      expect(createHash('sha256').update(png).digest('hex')).toBe(shot.artifact);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("the demo agent's demo/desktop is an xterm whose typed commands act in the attempt's workspace", async () => {
    const res = await g.invoke(g.tokens.agent, 'demo-desktop-1', {
      ...(call('demo/desktop', {
        actions: [
          { action: 'type', text: 'pwd > from-demo' },
          { action: 'key', text: 'Return' },
          { action: 'wait', duration: 1 },
        ],
      }) as object),
      runId: 'demo-run',
      attemptId: 'demo-attempt',
    });
    const r = res.body;
    expect(r.status, JSON.stringify(r.error)).toBe('observed');
    expect(out(r).screenshot).toMatchObject({ mediaType: 'image/png', width: 1024, height: 768 });
    const workspace = join(g.sandboxRoot, 'workspaces', String(r.lease?.id));
    expect(readFileSync(join(workspace, 'from-demo'), 'utf8')).toBe('/workspace\n');
  }, 60_000);

  it('refuses, at validation and with a pointer to the action, one the tool does not allow and a coordinate off the display', async () => {
    const before = ours().map((p) => p.pid);
    const res = await g.invoke(
      agent,
      'desktop-refused',
      call('test/desktop', {
        actions: [
          { action: 'screenshot' },
          { action: 'right_click', coordinate: [10, 10] },
          { action: 'left_click', coordinate: [DISPLAY.width, 5] },
          { action: 'key', text: 'ctrl+;' },
        ],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.status).toBe('denied');
    const violations = res.body.error?.details?.violations as {
      pointer: string;
      message: string;
    }[];
    expect(violations).toEqual([
      {
        pointer: '/actions/1/action',
        message: expect.stringMatching(
          /^is right_click, which this tool does not allow/,
        ) as unknown,
      },
      {
        pointer: '/actions/2/coordinate',
        message: `is [${DISPLAY.width}, 5], outside the display (${DISPLAY.width}×${DISPLAY.height}): x must be 0–${DISPLAY.width - 1} and y 0–${DISPLAY.height - 1}`,
      },
      {
        pointer: '/actions/3/text',
        message: expect.stringMatching(
          /^names "ctrl\+;", which is not an X keysym chord/,
        ) as unknown,
      },
    ]);
    // Nothing started: a denied call has no lease and no desktop.
    expect(ours().map((p) => p.pid)).toEqual(before);
  });

  it('refuses at publication a screen smaller than the display, or of another aspect ratio', async () => {
    for (const [screen, problem] of [
      [{ width: 400, height: 300 }, /execution.screen \(400×300\) is smaller than the display/],
      [{ width: 1920, height: 1080 }, /execution.screen \(1920×1080\) has another aspect ratio/],
    ] as const) {
      const descriptor = desktopTool('test/desktop-bad-screen', {
        application: ['xterm'],
        allowedActions: ['screenshot'],
        display: DISPLAY,
        screen,
      });
      const res = await g.inject<{ error?: { message: string } }>('POST', '/v1/events', {
        token: g.tokens.admin,
        body: [
          {
            id: `bad-screen-${screen.width}`,
            type: 'AssetReleasePublished',
            data: {
              assetId: descriptor.id,
              version: '1.0.0',
              descriptor,
              inFlightPolicy: 'finish',
            },
          },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(JSON.stringify(res.body)).toMatch(problem);
    }
  });
});
