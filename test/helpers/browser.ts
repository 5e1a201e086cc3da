// The console's end-to-end tests: a whole Pigeon in this process (API, link server, delivery on the
// carrier simulator, webhooks) on real ports and a SQLite file, the console built as `npm start` builds it,
// and Debian's Chromium driven by playwright-core. Screenshots go to a folder of the run (CONSOLE_SCREENSHOTS
// names another, such as docs/console).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import { type Running, startRuntime } from '../../src/runtime.ts';
import { chromiumMissing, chromiumPath } from './chromium.ts';
import { freePort } from './free-port.ts';

/** Flags that keep Chromium off the network it cannot reach, and quiet. */
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export interface ConsoleFixture {
  deps: Deps;
  running: Running;
  /** The API's origin: the console is at `${apiUrl}/console`. */
  apiUrl: string;
  linkUrl: string;
  browser: Browser;
  /** A new browser profile (its own cookies), on a desktop or a phone-sized screen. */
  context(options?: { phone?: boolean }): Promise<BrowserContext>;
  /** Signs in through the form and waits for the dashboard. */
  signIn(page: Page, email: string, password: string): Promise<void>;
  /** An account with a password, made by the same service `pigeon account create` uses. */
  account(options?: {
    credits?: number;
  }): Promise<{ id: number; email: string; password: string; token: string }>;
  /** Calls the API with an account's token, as a script would: the parsed answer. */
  call<T = Envelope>(token: string, method: string, path: string, body?: unknown): Promise<T>;
  /** Saves a full-page screenshot as `<name>.png` in the run's screenshot folder. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/** An API answer: its status and whatever fields it has. */
export interface Envelope {
  status: number;
  [field: string]: unknown;
}

let accounts = 0;

export async function startConsoleFixture(env: Record<string, string> = {}): Promise<ConsoleFixture> {
  // Chromium is installed and the console built once per run, by the global setup.
  if (!existsSync(chromiumPath)) throw new Error(chromiumMissing);
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-console-'));
  // The link server's port is chosen first, so the short URLs in messages point at it.
  const linkPort = await freePort();
  const config = loadConfig({
    DATABASE_URL: join(dir, 'pigeon.db'),
    PORT: '0',
    HOST: '127.0.0.1',
    LINK_PORT: String(linkPort),
    LINK_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ROLE: 'all',
    TRANSPORT: 'simulator',
    RATE_LIMIT_IP_RPS: '0',
    RATE_LIMIT_AUTH_FAILURES: '0',
    // Marketing sends go out at any hour in these tests, and every message is delivered at once.
    MARKETING_HOURS: '00:00-24:00',
    MARKETING_DAYS: '1-7',
    MARKETING_HOLIDAYS: 'none',
    SIM_DLR_DELAY_MS: '100',
    SIM_OUTCOMES: 'DELIVRD=1',
    ...env,
  });
  const deps = await createDeps(config, { logger: pino({ level: 'silent' }) });
  const running = await startRuntime(deps);
  const apiUrl = running.apiUrl!;
  const linkUrl = running.linkUrl!;
  const shots = process.env.CONSOLE_SCREENSHOTS ?? join(dir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: chromiumArgs,
    timeout: 60_000,
  });
  return {
    deps,
    running,
    apiUrl,
    linkUrl,
    browser,
    async context(options = {}) {
      const context = await browser.newContext({
        baseURL: apiUrl,
        viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 860 },
        deviceScaleFactor: 1,
        isMobile: options.phone ?? false,
        hasTouch: options.phone ?? false,
        timezoneId: config.TIMEZONE,
      });
      context.setDefaultTimeout(15_000);
      return context;
    },
    async signIn(page, email, password) {
      await page.goto('/console');
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // The balance is in the top bar on every screen (on a phone the navigation is behind Menu).
      await page.getByTestId('balance').waitFor();
    },
    async account(options = {}) {
      accounts++;
      const email = `console${accounts}-${Date.now().toString(36)}@example.com`;
      const password = 'correct horse battery';
      const created = await deps.services.accounts.createAccount({
        email,
        password,
        credits: options.credits ?? 1000,
      });
      return { id: Number(created.account_id), email, password, token: created.token };
    },
    async call<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
      const response = await fetch(`${apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await response.json()) as T;
    },
    async screenshot(page, name) {
      const path = join(shots, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await browser.close().catch(() => {});
      await running.stop();
      await deps.close();
      if (!process.env.CONSOLE_SCREENSHOTS) rmSync(dir, { recursive: true, force: true });
      else rmSync(join(dir, 'pigeon.db'), { force: true });
    },
  };
}
