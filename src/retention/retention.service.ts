// Retention: each account's settings, and the job that deletes what is older than them, kind by kind, in
// bounded batches of short transactions so sends and workers keep their turns on the database.
import { type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import type { Db } from '../store/db.ts';
import { type RetentionRow, retentionRepo } from './retention.repo.ts';
import {
  cutoffOf,
  keepForever,
  parsePeriod,
  type RetentionKind,
  type RetentionSetting,
  retentionSettings,
} from './retention-period.ts';

/**
 * Deletes up to `limit` of the account's rows of one kind older than `before` (epoch ms), in one short
 * transaction of its own; returns how many went. Served by the capabilities that own the rows (deps.ts).
 */
export type Purge = (accountId: number, before: number, limit: number) => Promise<number>;

/**
 * One purge per kind, and the audit log's entries (src/audit), which have no setting of their own: they go with
 * the `campaign` setting, the account's history of what it sent and did.
 */
export type RetentionTargets = Record<RetentionKind, Purge> & { audit: Purge };
type Target = keyof RetentionTargets;

const keepAll: RetentionRow = {
  message: '-1',
  list: '-1',
  campaign: '-1',
  mo: '-1',
  lookup: '-1',
  survey: '-1',
};

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export type RetentionService = ReturnType<typeof createRetentionService>;

export function createRetentionService(deps: {
  db: Db;
  clock: Clock;
  targets: RetentionTargets;
  /** Rows deleted per statement and transaction. */
  batchSize?: number;
  /** The audit log: a change of the settings, in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, targets, audit } = deps;
  const batchSize = deps.batchSize ?? 1000;

  async function purgeKind(accountId: number, kind: Target, before: number): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await targets[kind](accountId, before, batchSize);
      total += deleted;
      if (deleted === 0) return total;
      await nextTurn();
    }
  }

  return {
    async get(auth: AuthContext): Promise<RetentionRow> {
      return (await retentionRepo.find(db, auth.accountId)) ?? keepAll;
    },

    /** Sets the kinds given; the others keep their setting. Every value is checked before anything is saved. */
    async put(auth: AuthContext, input: Partial<Record<RetentionSetting, unknown>> | undefined) {
      const given = input ?? {};
      const unknown = Object.keys(given).filter((k) => !(retentionSettings as readonly string[]).includes(k));
      if (unknown.length > 0) {
        throw ApiError.data(`retention.${unknown[0]} is not a setting: use ${retentionSettings.join(', ')}`);
      }
      const current = (await retentionRepo.find(db, auth.accountId)) ?? keepAll;
      const next = { ...current };
      let changed = 0;
      for (const kind of retentionSettings) {
        if (given[kind] === undefined) continue;
        const parsed = parsePeriod(given[kind]);
        if (!parsed.ok) throw ApiError.data(`retention.${kind} "${String(given[kind])}" ${parsed.reason}`);
        next[kind] = parsed.period;
        changed++;
      }
      if (changed === 0) {
        throw ApiError.data(`retention needs at least one of ${retentionSettings.join(', ')}`);
      }
      const entry = { accountId: auth.accountId, auth, action: 'retention.update', objectType: 'retention' };
      await withEntry(db, audit, entry, (tx) => retentionRepo.save(tx, auth.accountId, next, clock.now()));
      return next;
    },

    /**
     * One pass over every account that limits something: deletes what is older than its settings. Returns
     * the rows deleted per kind. Safe to run from several processes: each delete takes rows that still exist.
     */
    async runOnce(): Promise<Record<Target, number>> {
      const deleted: Record<Target, number> = {
        message: 0,
        list: 0,
        campaign: 0,
        mo: 0,
        lookup: 0,
        audit: 0,
      };
      for (let after = 0; ; ) {
        const rows = await retentionRepo.withLimits(db, after, 100);
        for (const row of rows) {
          const accountId = Number(row.account_id);
          const now = clock.now();
          // Campaigns first: deleting one takes its messages along, which the message pass need not visit.
          for (const kind of ['campaign', 'message', 'mo', 'list', 'lookup'] as const) {
            const before = cutoffOf(row[kind] ?? keepForever, now);
            if (before !== undefined) deleted[kind] += await purgeKind(accountId, kind, before);
          }
          const auditBefore = cutoffOf(row.campaign ?? keepForever, now);
          if (auditBefore !== undefined) deleted.audit += await purgeKind(accountId, 'audit', auditBefore);
        }
        if (rows.length < 100) return deleted;
        after = Number(rows[rows.length - 1].account_id);
      }
    },
  };
}
