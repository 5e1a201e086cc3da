// The audit log's cost on the send path, in this process, back to back: single-recipient sends (one link)
// through the sending service, 64 at a time as the HTTP layer's group commit sees them, with the audit log
// wired (each send's `campaign.send` entry, written with its group's) and with a port that writes nothing,
// alternating in short rounds so that the load of the machine falls on both alike. CPU time of this process
// (SQLite runs in it; on PostgreSQL the server's backends are not counted, and wall time is printed beside).
// Run: npm run bench -- audit    (BENCH_AUDIT_DATABASES=sqlite,postgres; BENCH_AUDIT_ROUNDS, BENCH_AUDIT_SENDS)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { createSendingService } from '../src/campaigns/sending.service.ts';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import type { AuditTrail } from '../src/shared/audit-trail.ts';
import type { AuthContext } from '../src/shared/auth-context.ts';
import { defaultPgUrl } from './pipeline/postgres.ts';

const rounds = Number(process.env.BENCH_AUDIT_ROUNDS ?? 6);
const sendsPerRound = Number(process.env.BENCH_AUDIT_SENDS ?? 2048);
const databases = (process.env.BENCH_AUDIT_DATABASES || 'sqlite,postgres').split(',').map((d) => d.trim());
const concurrency = 64;

/** The audit port that writes nothing: the send path as it was before the audit log. */
const silent: AuditTrail = {
  actor: () => ({ kind: 'pigeon', id: null, ip: null }),
  record: async () => {},
  recordMany: async () => {},
};

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function benchDatabase(kind: string): Promise<void> {
  let url: string;
  let cleanup: () => Promise<void>;
  if (kind === 'postgres') {
    const schema = `bench_audit_${randomBytes(4).toString('hex')}`;
    url = `${defaultPgUrl}?schema=${schema}`;
    cleanup = async () => {
      const client = new pg.Client({ connectionString: defaultPgUrl });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-bench-audit-'));
    url = join(dir, 'pigeon.db');
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const deps = await createDeps(config, { logger: pino({ level: 'silent' }) });
  try {
    const s = deps.services;
    const created = await s.accounts.createAccount({
      email: `bench-${randomBytes(4).toString('hex')}@example.com`,
      password: 'correct horse battery',
      credits: 1_000_000_000,
    });
    const tokenId = Number(
      (await s.tokens.listTokens({ accountId: Number(created.account_id), tokenId: 0, parentId: null }))[0]
        .api_token_id,
    );
    // As the HTTP layer gives it: the caller with the client's address.
    const auth: AuthContext = {
      accountId: Number(created.account_id),
      tokenId,
      parentId: null,
      clientIp: '203.0.113.9',
    };
    const sendingWith = (audit: AuditTrail) =>
      createSendingService({
        db: deps.store.db,
        dialect: deps.store.dialect,
        clock: deps.clock,
        config,
        credits: s.credits,
        links: s.links,
        delivery: s.delivery,
        idempotency: s.idempotency,
        prices: s.prices,
        limits: s.limits,
        audit,
      });
    const variants = { audited: sendingWith(s.audit), unaudited: sendingWith(silent) };
    const message = {
      text: 'Your order shipped <-short->',
      sender: 'Pigeon',
      links: ['https://example.com/o'],
    };
    let number = 0;
    async function round(sending: (typeof variants)['audited']): Promise<{ cpu: number; wall: number }> {
      const cpu0 = cpuMs();
      const wall0 = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < sendsPerRound) {
          next++;
          const to = `336${String(10_000_000 + (number++ % 89_999_999)).padStart(8, '0')}`;
          await sending.send(auth, message, [{ value: to }], { simulate: false });
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      return { cpu: (cpuMs() - cpu0) / sendsPerRound, wall: (performance.now() - wall0) / sendsPerRound };
    }
    // Warm both paths (prepared statements, JIT) before measuring.
    await round(variants.unaudited);
    await round(variants.audited);
    const totals = { audited: { cpu: 0, wall: 0 }, unaudited: { cpu: 0, wall: 0 } };
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (['unaudited', 'audited'] as const) : (['audited', 'unaudited'] as const);
      for (const name of order) {
        const m = await round(variants[name]);
        totals[name].cpu += m.cpu / rounds;
        totals[name].wall += m.wall / rounds;
      }
    }
    const us = (ms: number) => `${Math.round(ms * 1000)} µs`;
    console.log(
      `${kind}: ${rounds} rounds of ${sendsPerRound} sends each way, ${concurrency} at once, alternating\n` +
        `    without audit: CPU ${us(totals.unaudited.cpu)} per send, wall ${us(totals.unaudited.wall)}\n` +
        `    with audit:    CPU ${us(totals.audited.cpu)} per send, wall ${us(totals.audited.wall)}\n` +
        `    ratio with/without: CPU ${(totals.audited.cpu / totals.unaudited.cpu).toFixed(3)}, wall ${(totals.audited.wall / totals.unaudited.wall).toFixed(3)}`,
    );
  } finally {
    await deps.close();
    await cleanup();
  }
}

export async function run(): Promise<void> {
  for (const kind of databases) await benchDatabase(kind);
}
