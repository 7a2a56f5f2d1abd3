import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { missingCommand } from '../helpers/prerequisites.js';
import { processesMatching } from '../helpers/sandbox-tools.js';

/** Debian's Chromium binary. */
export const CHROMIUM = '/usr/lib/chromium/chromium';

/**
 * The Chromium processes of browser tools: those in a pid namespace of a sandbox. Another test's
 * Chromium (the Studio's, driven unsandboxed on the host) is not one of them.
 */
export function sandboxedChromium(): { pid: number; cmdline: string }[] {
  return processesMatching(CHROMIUM).filter((p) => {
    try {
      const nspid = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'));
      return (nspid?.[1]?.trim().split(/\s+/).length ?? 0) > 1;
    } catch {
      return false;
    }
  });
}

/** Null when Debian's Chromium is installed here; else why not. */
export function missingChromium(): string | null {
  return missingCommand(CHROMIUM);
}

/** A loopback web app the browser tests visit: pages served by this test process. */
export interface TestSite {
  port: number;
  origin: string;
  /** Form posts the login page received, in order. */
  logins: { user: string; password: string }[];
  /** Requests the site saw (method and path). */
  seen: string[];
  close(): Promise<void>;
}

const PAGES: Record<string, (origin: string, other: number) => string> = {
  '/': () =>
    `<!doctype html><title>Ticket board</title><h1>Open tickets</h1><ul><li class="t">Printer on fire</li><li class="t">VPN down</li></ul><a id="passwd" href="file:///etc/passwd">passwd</a>`,
  '/login': () =>
    `<!doctype html><title>Sign in</title><form method="post" action="/login"><input id="user" name="user"><input id="password" name="password" type="password"><button id="go" type="submit">Sign in</button></form>`,
  '/peek': (_origin, other) =>
    `<!doctype html><title>Peek</title><h1 id="out">waiting</h1><script>fetch('http://127.0.0.1:${other}/secret').then(r => r.text()).then(t => { document.getElementById('out').textContent = 'got ' + t; }, () => { document.getElementById('out').textContent = 'blocked'; });</script>`,
  '/form': () =>
    `<!doctype html><title>Form</title><form action="/echo" method="get"><input id="q" name="q"><select id="color" name="color"><option value="red">Red</option><option value="green">Green</option><option value="blue">Blue</option></select></form><p id="keys"></p><script>document.addEventListener('keydown', (e) => { document.getElementById('keys').textContent += '[' + e.key + ']'; });</script>`,
  '/popup': (_origin, other) =>
    `<!doctype html><title>Popups</title><a id="away" href="http://127.0.0.1:${other}/secret" target="_blank">away</a><button id="open" onclick="window.open('http://127.0.0.1:${other}/secret', 'w')">open</button><a id="near" href="/" target="_blank">near</a><script>window.open('http://127.0.0.1:${other}/secret');</script>`,
  '/download': () =>
    `<!doctype html><title>Download</title><a id="save" href="/file.bin" download="file.bin">save</a><a id="attach" href="/attachment">attachment</a>`,
  '/set': () =>
    `<!doctype html><title>Set</title><p id="state"></p><script>document.cookie = 'k=cookie-1; path=/'; localStorage.setItem('k', 'local-1'); document.getElementById('state').textContent = document.cookie + '|' + localStorage.getItem('k');</script>`,
  '/state': () =>
    `<!doctype html><title>State</title><p id="state"></p><script>document.getElementById('state').textContent = document.cookie + '|' + localStorage.getItem('k');</script>`,
  '/hog': () =>
    `<!doctype html><title>Hog</title><h1>eating</h1><script>const kept = []; setInterval(() => { for (let i = 0; i < 8; i++) kept.push(new Uint8Array(16 * 1024 * 1024).fill(7)); }, 20);</script>`,
};

/** What the test site's downloads hold: a file that must never land anywhere. */
export const DOWNLOAD_BODY = 'the-downloaded-file-body';

/**
 * Starts the test site on 127.0.0.1 (a free port), and beside it a second loopback server that
 * no tool lists (`other`), which answers `/secret` to anyone who reaches it.
 */
export async function startTestSite(): Promise<TestSite & { other: Server; otherPort: number }> {
  const other = createServer((_req, res) => res.end('the-unlisted-secret'));
  await new Promise<void>((ok) => other.listen(0, '127.0.0.1', ok));
  const otherPort = (other.address() as AddressInfo).port;
  const logins: TestSite['logins'] = [];
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''}`);
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'POST' && path === '/login') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        logins.push({ user: form.get('user') ?? '', password: form.get('password') ?? '' });
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          `<!doctype html><title>Welcome</title><h1 id="hello">Welcome ${form.get('user') ?? ''}</h1>`,
        );
      });
      return;
    }
    if (path === '/echo') {
      const q = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>Echo</title><p id="q">${q.get('q') ?? ''}</p><p id="color">${q.get('color') ?? ''}</p>`,
      );
      return;
    }
    if (path === '/file.bin' || path === '/attachment') {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename="file.bin"',
      });
      res.end(DOWNLOAD_BODY);
      return;
    }
    const page = PAGES[path];
    if (!page) {
      res.writeHead(404).end('no such page');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(`http://127.0.0.1`, otherPort));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    logins,
    seen,
    other,
    otherPort,
    close: async () => {
      server.closeAllConnections();
      other.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await new Promise<void>((ok) => other.close(() => ok()));
    },
  };
}

/** A `browser` descriptor with `extra` laid over it. */
export function browserTool(
  id: string,
  execution: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    version: '1.0.0',
    kind: 'browser',
    title: id,
    description: `${id}: a browser tool (a test tool).`,
    inputSchema: {
      type: 'object',
      required: ['steps'],
      properties: { steps: { type: 'array' } },
    },
    sideEffect: { class: 'read' },
    execution,
    timeoutMs: 60_000,
    ...extra,
  };
}
