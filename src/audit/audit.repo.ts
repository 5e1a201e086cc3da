// SQL for the audit log. No rules here: the service decides whose entries, which filters and what may go.
import type { SelectQueryBuilder } from 'kysely';
import { insertRows } from '../store/bulk-insert.ts';
import type { Executor } from '../store/db.ts';
import type { Database } from '../store/schema.ts';

/** The columns an entry is written with, in the order `insert`'s rows give them. */
export const auditColumns = [
  'account_id',
  'at',
  'actor_kind',
  'actor_id',
  'actor_label',
  'action',
  'object_type',
  'object_id',
  'ip',
] as const;

/** Rows per statement: 9 columns each, far under SQLite's 32,766 parameters. */
const batchRows = 256;

export interface AuditFilter {
  accountIds: readonly number[];
  /** An action (`campaign.send`), or its family (`campaign`, every `campaign.*`). */
  action?: { exact: string } | { family: string };
  actorKind?: string;
  actorId?: string;
  /** Epoch ms, both included. */
  from?: number;
  to?: number;
}

function filtered<O>(
  query: SelectQueryBuilder<Database, 'audit_log', O>,
  filter: AuditFilter,
): SelectQueryBuilder<Database, 'audit_log', O> {
  let q = query.where('account_id', 'in', [...filter.accountIds]);
  const { action } = filter;
  if (action && 'exact' in action) q = q.where('action', '=', action.exact);
  if (action && 'family' in action) q = q.where('action', 'like', `${action.family}.%`);
  if (filter.actorKind !== undefined) q = q.where('actor_kind', '=', filter.actorKind);
  if (filter.actorId !== undefined) q = q.where('actor_id', '=', filter.actorId);
  if (filter.from !== undefined) q = q.where('at', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('at', '<=', filter.to);
  return q;
}

export const auditRepo = {
  /** Appends entries, each given as its values in `auditColumns` order. */
  insert(db: Executor, rows: readonly unknown[][]): Promise<void> {
    return insertRows(db, 'audit_log', auditColumns, rows, batchRows);
  },

  /** A page of the entries matching `filter`, newest first. */
  page(db: Executor, filter: AuditFilter, start: number, length: number) {
    return filtered(db.selectFrom('audit_log').selectAll(), filter)
      .orderBy('id', 'desc')
      .limit(length)
      .offset(start)
      .execute();
  },

  async count(db: Executor, filter: AuditFilter): Promise<number> {
    const row = await filtered(
      db.selectFrom('audit_log').select((eb) => eb.fn.countAll<string | number>().as('n')),
      filter,
    ).executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /**
   * Deletes those of the account's `limit` oldest entries (by id) that are older than `before`; how many went.
   * Entries are written in time order, so the old ones are the first by id: the scan reads at most `limit`
   * entries of the account's index, however many it has, and a pass stops at the first batch with none to go.
   */
  async purge(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    const oldest = db
      .selectFrom('audit_log')
      .select('id')
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(limit);
    const result = await db
      .deleteFrom('audit_log')
      .where('id', 'in', oldest)
      .where('at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
