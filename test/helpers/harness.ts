// One Pigeon per test file and dialect: a fresh SQLite file, or a fresh PostgreSQL schema, a manual
// clock, and the Fastify app driven through inject.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { failedTogetherMessage } from '../../src/campaigns/send-batcher.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { openStore, type Store, withAdvisoryLock } from '../../src/store/db.ts';
import { ManualClock } from './clock.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Harness {
  dialect: Dialect;
  databaseUrl: string;
  config: Config;
  deps: Deps;
  app: App;
  clock: ManualClock;
  /** What the process logged at warn or above (the latest 200 lines, parsed): a test can check nothing went wrong. */
  logged: { level: number; msg: string; err?: { message?: string } }[];
  /** Creates an account with credits and returns its id and a token. */
  account(options?: { credits?: number; parentId?: number; unlimited?: boolean }): Promise<TestAccount>;
  close(): Promise<void>;
}

export interface TestAccount {
  id: number;
  token: string;
}

export function availableDialects(): Dialect[] {
  return inject('pgUrl') ? ['sqlite', 'postgres'] : ['sqlite'];
}

let accountCounter = 0;

export interface HarnessOptions {
  /**
   * Runs on the fresh, empty database before Pigeon opens it and applies its migrations: a test can bring
   * it to an older schema and store data the way an older version did.
   */
  beforeMigrations?: (store: Store) => Promise<void>;
}

export async function createHarness(
  dialect: Dialect,
  env: Record<string, string> = {},
  options: HarnessOptions = {},
): Promise<Harness> {
  let databaseUrl: string;
  let cleanup: () => Promise<void>;
  if (dialect === 'postgres') {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const base = inject('pgUrl');
    databaseUrl = `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;
    // Dropped under the migration lock: another process may be migrating (reading every schema) meanwhile.
    cleanup = () =>
      withAdvisoryLock(base, async () => {
        const client = new pg.Client({ connectionString: base });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      });
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-test-'));
    databaseUrl = join(dir, 'pigeon.db');
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    // Every request of a test comes from one address (inject's 127.0.0.1), on the system clock: the limits
    // per IP are off unless a test sets them (test/http/rate-limits.test.ts).
    RATE_LIMIT_IP_RPS: '0',
    RATE_LIMIT_AUTH_FAILURES: '0',
    ...env,
  });
  const clock = new ManualClock();
  let store: Store | undefined;
  if (options.beforeMigrations) {
    store = await openStore(config.DATABASE_URL);
    await options.beforeMigrations(store);
  }
  const logged: Harness['logged'] = [];
  // Groups of sends whose statement failed and were written again one by one: every answer stays right, so
  // only the log tells. `close` fails the suite that left one behind.
  const fellBack: string[] = [];
  const logger = pino(
    { level: 'warn' },
    {
      write(line: string) {
        const entry: Harness['logged'][number] = JSON.parse(line);
        logged.push(entry);
        if (logged.length > 200) logged.shift();
        if (entry.msg === failedTogetherMessage && fellBack.length < 10)
          fellBack.push(String(entry.err?.message));
      },
    },
  );
  const deps = await createDeps(config, { clock, logger, store });
  const app = buildApi({ config, logger: deps.logger, services: deps.services });
  await app.ready();
  return {
    dialect,
    databaseUrl,
    config,
    deps,
    app,
    clock,
    logged,
    async account(options = {}) {
      accountCounter++;
      const created = await deps.services.accounts.createAccount({
        email: `user${accountCounter}-${randomBytes(4).toString('hex')}@example.com`,
        password: 'correct horse battery',
        credits: options.credits ?? 1000,
        parentId: options.parentId,
        unlimited: options.unlimited,
      });
      return { id: Number(created.account_id), token: created.token };
    },
    async close() {
      await app.close();
      await deps.close();
      await cleanup();
      if (fellBack.length > 0) throw new Error(`${failedTogetherMessage}: ${fellBack.join('; ')}`);
    },
  };
}

/** Registers `suite` once per available dialect, each with its own harness. */
export function describeEachDialect(
  name: string,
  suite: (get: () => Harness) => void,
  env: Record<string, string> = {},
): void {
  for (const dialect of availableDialects()) describeOn(dialect, name, suite, env);
}

/** A suite of PostgreSQL's own behaviour (plans, page layout): run only where PostgreSQL is available. */
export function describeOnPostgres(name: string, suite: (get: () => Harness) => void): void {
  if (availableDialects().includes('postgres')) describeOn('postgres', name, suite, {});
}

function describeOn(
  dialect: Dialect,
  name: string,
  suite: (get: () => Harness) => void,
  env: Record<string, string>,
): void {
  describe(`${name} [${dialect}]`, () => {
    let harness: Harness | undefined;
    beforeAll(async () => {
      harness = await createHarness(dialect, env);
    });
    afterAll(async () => {
      await harness?.close();
    });
    suite(() => {
      if (!harness) throw new Error('harness not ready');
      return harness;
    });
  });
}

const xmlArrays = new Set([
  'response.webhooks',
  'response.tokens',
  'response.lists',
  'response.campaign',
  'response.campaigns',
  'response.contacts',
  'response.allowed_ips',
]);
const responseParser = new XMLParser({
  parseTagValue: false,
  ignoreDeclaration: true,
  isArray: (_name, jpath) => xmlArrays.has(String(jpath)),
});

export interface CallOptions {
  token?: string;
  json?: unknown;
  xml?: string;
  body?: string;
  contentType?: string;
  accept?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface CallResult {
  httpCode: number;
  headers: Record<string, unknown>;
  contentType: string;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response fields freely.
  body: any;
}

/** Calls the API; the body comes back parsed from JSON, or from XML (root <response> unwrapped). */
export async function call(
  app: App,
  method: string,
  url: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.accept) headers.accept = options.accept;
  let payload: string | undefined;
  if (options.json !== undefined) {
    payload = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  } else if (options.xml !== undefined) {
    payload = options.xml;
    headers['content-type'] = 'application/xml';
  } else if (options.body !== undefined) {
    payload = options.body;
  }
  if (options.contentType) headers['content-type'] = options.contentType;
  const response = await app.inject({
    method: method as 'GET',
    url,
    headers,
    payload,
    query: options.query,
  });
  const contentType = String(response.headers['content-type'] ?? '');
  const raw = response.body;
  let body: unknown;
  if (contentType.includes('xml')) body = (responseParser.parse(raw) as { response: unknown }).response;
  else body = raw === '' ? undefined : JSON.parse(raw);
  return { httpCode: response.statusCode, headers: response.headers, contentType, raw, body };
}
