#!/usr/bin/env node
// `npm run docs:screenshots`: the README's pictures of the browser and computer-use tools, taken
// by the demo's own tools through a real gateway. It starts `gatehouse serve --demo` on a scratch
// data directory, puts two tickets on the demo ticket board (its REST API), has `demo/browse`
// open the board and take a screenshot, has `demo/desktop` type a command into its xterm, and
// copies the two screenshots (the calls' PNG artifacts) to docs/images/. Then it stops the gateway
// and removes the data directory.
//
// Needs the build (`npm run docs:screenshots` does it), root, bubblewrap, chromium, xvfb, xdotool,
// imagemagick and xterm (as the browser and computer-use tests do).
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { startDemoGateway } from './start-demo-gateway.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMAGES = join(ROOT, 'docs', 'images');
const { loadConfig } = await import(join(ROOT, 'dist', 'app', 'index.js'));

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-shots-'));
const sandboxRoot = loadConfig({ dataDir }, {}).sandbox.root;

/** A JSON request; its parsed answer. @throws Error on a status other than `expected`. */
async function request(url, { method = 'GET', token, key, body, expected = [200] } = {}) {
  const res = await globalThis.fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(key ? { 'idempotency-key': key } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const answer = await res.json();
  if (!expected.includes(res.status))
    throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(answer).slice(0, 500)}`);
  return answer;
}

/** Invokes a demo tool as the demo agent; the invocation record, which must be observed. */
async function invoke(url, token, tool, input, extra = {}) {
  const record = await request(`${url}/v1/invocations`, {
    method: 'POST',
    token,
    key: `docs-screenshots-${tool}-${Date.now()}`,
    body: { tool: { id: tool, version: '1.0.0' }, input, environment: 'dev', ...extra },
  });
  if (record.status !== 'observed')
    throw new Error(`${tool}: ${record.status} ${JSON.stringify(record.error ?? {})}`);
  return record;
}

/** Copies the artifact `sha` of the data directory to docs/images/`name`. */
function keep(sha, name) {
  copyFileSync(join(dataDir, 'artifacts', sha.slice(0, 2), sha), join(IMAGES, name));
  chmodSync(join(IMAGES, name), 0o644);
  process.stdout.write(`docs/images/${name}\n`);
}

const { child, url } = await startDemoGateway(dataDir);
try {
  const tokens = JSON.parse(readFileSync(join(dataDir, 'demo-tokens.json'), 'utf8'));
  const board = JSON.parse(readFileSync(join(dataDir, 'demo-tickets.json'), 'utf8'));
  const tickets = `http://127.0.0.1:${board.port}`;
  for (const ticket of [
    { title: 'Printer on fire', body: 'Third floor, next to the kitchen.' },
    { title: 'Coffee machine leaks', body: 'A puddle every morning.' },
  ])
    await request(`${tickets}/api/tickets`, {
      method: 'POST',
      token: board.apiKey,
      body: ticket,
      expected: [201],
    });

  const browsed = await invoke(url, tokens.agent, 'demo/browse', {
    steps: [
      { action: 'goto', url: `${tickets}/` },
      { action: 'extract', selector: 'h1' },
      { action: 'screenshot' },
    ],
  });
  keep(browsed.output.steps.at(-1).artifact, 'browser-ticket-board.png');

  const desktop = await invoke(url, tokens.agent, 'demo/desktop', {
    actions: [
      { action: 'type', text: 'echo hi > /workspace/x; ls -l /workspace; cat x' },
      { action: 'key', text: 'Return' },
      { action: 'wait', duration: 1 },
    ],
  });
  keep(desktop.output.screenshot.artifact, 'desktop-xterm.png');
} finally {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(sandboxRoot, { recursive: true, force: true });
}
