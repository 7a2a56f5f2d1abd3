import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { ExecutionLease } from '../../invocation/index.js';
import { EGRESS_PROXY_URL } from '../../sandbox/index.js';
import type { ConfinedCommand, ConfinedSpec } from '../../sandbox/index.js';
import { chromiumArgv, writeChromiumLauncher } from './chromium-launcher.js';

/** What the browser executor needs of the sandbox: long-lived confined processes. */
export interface ConfiningSandbox {
  /** A process in bubblewrap and a cgroup of the spec's id with its limits (BwrapSandbox's). */
  confinedCommand(spec: ConfinedSpec): Promise<ConfinedCommand>;
}

/** Where Chromium reads mandatory policies on Debian. */
const POLICY_DIR = '/etc/chromium/policies/managed';

/**
 * Chromium's own refusals, as mandatory policy: no local files, browser pages, `data:` or
 * `javascript:` URLs; no downloads; no popups; no extensions, printing or password saving.
 */
const POLICY = {
  URLBlocklist: [
    'file://*',
    'chrome://*',
    'chrome-untrusted://*',
    'chrome-extension://*',
    'devtools://*',
    'view-source:*',
    'data:*',
    'javascript://*',
    'filesystem:*',
  ],
  DownloadRestrictions: 3,
  // Nothing of Chromium's own calls home (they would only meet the egress proxy's refusal).
  BrowserSignin: 0,
  SyncDisabled: true,
  ComponentUpdatesEnabled: false,
  MetricsReportingEnabled: false,
  SafeBrowsingProtectionLevel: 0,
  SearchSuggestEnabled: false,
  NetworkPredictionOptions: 2,
  DomainReliabilityAllowed: false,
  DefaultPopupsSetting: 2,
  ExtensionInstallBlocklist: ['*'],
  PasswordManagerEnabled: false,
  PrintingEnabled: false,
  DefaultNotificationsSetting: 2,
  DefaultGeolocationSetting: 2,
};

/** Most windows and downloads one call lists; past it they are counted only. */
export const MAX_PAGE_EVENTS = 20;

/** What pages did besides the steps: windows they opened, downloads Chromium refused. */
export interface PageEvents {
  /** New windows, where each went: `closed` when it reached another origin than the page. */
  popups: { url: string; closed: boolean }[];
  /** Downloads a page started, each refused (Chromium saves nothing). */
  downloadsRefused: { url: string; filename: string }[];
  /** How many of either did not fit the lists. */
  unlisted: number;
}

/** Chromium in a lease's sandbox, driven over a pipe, with one page. */
export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /**
   * The new windows and refused downloads since the last take (each call's output lists its own),
   * and clears them.
   */
  takeEvents(): PageEvents;
  /** Which limit of the lease's cgroup was hit, if any (`memory`, `pids`), and peak memory. */
  usage(): { maxMemoryBytes: number | null; limitHit: string | null };
  /** False once the browser closed or died. */
  running(): boolean;
  /** Closes the browser, kills what is left in its cgroup and removes the launcher. Safe twice. */
  close(): Promise<void>;
}

/**
 * Starts Debian's Chromium inside the lease's bubblewrap sandbox (its namespaces, seccomp filter,
 * the sandbox user, a cgroup with the lease's memory, CPU and pid limits), with a fresh profile in
 * the workspace and the network only through the lease's egress proxy (loopback included), and
 * connects Playwright to it over `--remote-debugging-pipe`: no debugging port anywhere.
 * @throws when the sandbox or Chromium does not start (then nothing of it is left).
 */
export async function openBrowserSession(o: {
  sandbox: ConfiningSandbox;
  lease: ExecutionLease;
  viewport: { width: number; height: number };
  timeoutMs: number;
  /** Where the per-call launcher and policy go (default the system's temporary directory). */
  scratch?: string;
  /** The cgroup's id (default the lease's; a browser that outlives the call has its own). */
  id?: string;
  /** The profile inside the workspace (default `/workspace/.browser-profile`). */
  profile?: string;
  /**
   * The socket bound where the egress proxy's goes (default the lease's, this call's endpoint; a
   * browser that outlives the call has a relay), or null for no network.
   */
  egressSocket?: string | null;
}): Promise<BrowserSession> {
  const egressSocket = o.egressSocket === undefined ? o.lease.egressSocket : o.egressSocket;
  const scratch = o.scratch ?? tmpdir();
  const policy = await mkdtemp(join(scratch, 'policy-'));
  let command: ConfinedCommand | null = null;
  let context: BrowserContext | null = null;
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await context?.close().catch(() => undefined);
      await command?.release();
      await rm(policy, { recursive: true, force: true });
    })());
  try {
    await chmod(policy, 0o755);
    await writeFile(join(policy, 'gatehouse.json'), JSON.stringify(POLICY), { mode: 0o644 });
    command = await o.sandbox.confinedCommand({
      id: o.id ?? o.lease.id,
      argv: chromiumArgv(o.profile),
      env: { HOME: '/workspace', LANG: 'C.UTF-8' },
      workspace: o.lease.workspace,
      readOnlyMounts: [
        ...o.lease.readOnlyMounts,
        { host: '/etc/fonts', sandbox: '/etc/fonts' },
        { host: policy, sandbox: POLICY_DIR },
      ],
      limits: o.lease.limits,
      egressSocket,
    });
    const launcher = await writeChromiumLauncher(command, scratch);
    try {
      // Loaded at the first browser session, not with the gateway: playwright-core alone takes
      // a large share of a gateway's start, and most gateways never open a browser.
      const { chromium } = await import('playwright-core');
      context = await chromium.launchPersistentContext(launcher.hostProfile, {
        executablePath: launcher.path,
        headless: true,
        env: {},
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        timeout: o.timeoutMs,
        args: [
          ...(egressSocket === null
            ? []
            : [`--proxy-server=${EGRESS_PROXY_URL}`, '--proxy-bypass-list=<-loopback>']),
          '--disable-dev-shm-usage',
          '--disable-gpu',
          '--no-first-run',
          '--disable-component-update',
          '--disable-sync',
          '--disable-domain-reliability',
          '--no-pings',
        ],
        viewport: o.viewport,
        acceptDownloads: false,
        // Chromium's own popup blocker (policy DefaultPopupsSetting) stays on.
        ignoreDefaultArgs: ['--disable-popup-blocking'],
        serviceWorkers: 'block',
      });
    } finally {
      await launcher.remove();
    }
    let ended = false;
    context.on('close', () => (ended = true));
    const page = context.pages()[0] ?? (await context.newPage());
    const events = watchPages(context, page);
    const confined = command;
    return {
      context,
      page,
      takeEvents: events.take,
      running: () => !ended && closing === null && !page.isClosed(),
      usage: () => {
        const u = confined.usage();
        return { maxMemoryBytes: u.maxMemoryBytes, limitHit: u.limitHit };
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Watches the context's pages: a new window that reaches another origin than `page` is closed;
 * each window, and each download Chromium refused, is listed for the call's output.
 */
function watchPages(context: BrowserContext, page: Page): { take: () => PageEvents } {
  let events: PageEvents = { popups: [], downloadsRefused: [], unlisted: 0 };
  const note = <T>(list: T[], item: T): void => {
    if (list.length < MAX_PAGE_EVENTS) list.push(item);
    else events.unlisted += 1;
  };
  const downloads = (p: Page): void => {
    p.on('download', (d) => {
      note(events.downloadsRefused, { url: d.url(), filename: d.suggestedFilename() });
      void d.cancel().catch(() => undefined);
    });
  };
  downloads(page);
  context.on('page', (popup) => {
    downloads(popup);
    const entry = { url: popup.url(), closed: false };
    note(events.popups, entry);
    const check = (): void => {
      if (popup.isClosed()) return;
      entry.url = popup.url();
      if (entry.url === 'about:blank' || sameOrigin(entry.url, page.url())) return;
      entry.closed = true;
      void popup.close().catch(() => undefined);
    };
    check();
    popup.on('framenavigated', (frame) => {
      if (frame === popup.mainFrame()) check();
    });
  });
  return {
    take: () => {
      const taken = { ...events, popups: events.popups.map((p) => ({ ...p })) };
      events = { popups: [], downloadsRefused: [], unlisted: 0 };
      return taken;
    },
  };
}

/** Whether two URLs share an origin (an opaque origin matches none). */
function sameOrigin(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    return x.origin !== 'null' && x.origin === new URL(b).origin;
  } catch {
    return false;
  }
}
