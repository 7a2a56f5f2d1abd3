import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
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

/** Chromium in a lease's sandbox, driven over a pipe, with one page. */
export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** How many new windows to another origin were closed. */
  popupsClosed(): number;
  /** Which limit of the lease's cgroup was hit, if any (`memory`, `pids`), and peak memory. */
  usage(): { maxMemoryBytes: number | null; limitHit: string | null };
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
}): Promise<BrowserSession> {
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
      id: o.lease.id,
      argv: chromiumArgv(),
      env: { HOME: '/workspace', LANG: 'C.UTF-8' },
      workspace: o.lease.workspace,
      readOnlyMounts: [
        ...o.lease.readOnlyMounts,
        { host: '/etc/fonts', sandbox: '/etc/fonts' },
        { host: policy, sandbox: POLICY_DIR },
      ],
      limits: o.lease.limits,
      egressSocket: o.lease.egressSocket,
    });
    const launcher = await writeChromiumLauncher(command, scratch);
    try {
      context = await chromium.launchPersistentContext(launcher.hostProfile, {
        executablePath: launcher.path,
        headless: true,
        env: {},
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        timeout: o.timeoutMs,
        args: [
          ...(o.lease.egressSocket === null
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
        serviceWorkers: 'block',
      });
    } finally {
      await launcher.remove();
    }
    const page = context.pages()[0] ?? (await context.newPage());
    let closed = 0;
    context.on('page', (popup) => {
      const same = (): boolean => sameOrigin(popup.url(), page.url());
      const shut = (): void => {
        if (popup.isClosed() || same()) return;
        closed += 1;
        void popup.close().catch(() => undefined);
      };
      if (popup.url() !== 'about:blank') shut();
      popup.on('framenavigated', (frame) => {
        if (frame === popup.mainFrame()) shut();
      });
    });
    const confined = command;
    return {
      context,
      page,
      popupsClosed: () => closed,
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

/** Whether two URLs share an origin (an opaque origin matches none). */
function sameOrigin(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    return x.origin !== 'null' && x.origin === new URL(b).origin;
  } catch {
    return false;
  }
}
