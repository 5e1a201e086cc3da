// The database is the queue: a worker takes due rows by setting a lease, and a row whose lease expired (its
// worker died mid-send) becomes due again. Messages, webhook deliveries and alert jobs are such queues; the
// statements that lease and release their rows are written once here, with each queue's table, state words
// and due column. On PostgreSQL concurrent workers skip each other's rows (FOR UPDATE SKIP LOCKED); SQLite
// has one writer, so a statement is already exclusive. Each statement is compiled once (prepared.ts).
//
// Messages and webhook deliveries are leased under their worker's term (`lease_owner`, store/lease-holder.ts):
// such a row is the worker's while the term is renewed, and is released once the term lapsed or is gone,
// whatever the row's own `lease_until` says. A row leased without a term (alert jobs; a row an older version
// leased) is released when its own `lease_until` has passed.
import { type Selectable, sql } from 'kysely';
import { checkedOnly } from './checked-only.ts';
import type { DialectName, Executor } from './db.ts';
import { executePrepared, padToShape, runPrepared, slot, slots } from './prepared.ts';
import type { Database } from './schema.ts';

/** The tables worked as leased queues: each has id, state, attempts, lease_until, updated_at and a due time. */
export type LeasedTable = 'messages' | 'webhook_deliveries' | 'alert_jobs';

type Row<T extends LeasedTable> = Selectable<Database[T]>;
type Column<T extends LeasedTable> = keyof Row<T> & string;

export interface LeaseQueueSpec<T extends LeasedTable> {
  table: T;
  /** The state of a row waiting for its due time. */
  waiting: string;
  /** The state of a leased row. */
  leased: string;
  /** When a waiting row is due. */
  dueColumn: Column<T> & ('due_at' | 'next_attempt_at');
  /** Whether taking the lease counts an attempt (else recording the attempt's outcome does). */
  leaseCountsAttempt: boolean;
  /** Whether rows are leased under a lease holder's term (the table has `lease_owner`). */
  termLeases?: boolean;
}

/** Rows whose `column` is one of `values` are left out. */
export interface Except<T extends LeasedTable> {
  column: Column<T>;
  values: readonly number[];
}

/** A slot typed as whatever the column it stands for takes. */
const as = (i: number) => slot(i) as never;

export function leaseQueue<T extends LeasedTable>(spec: LeaseQueueSpec<T>) {
  const { table, waiting, leased, dueColumn, leaseCountsAttempt } = spec;
  const termLeases = spec.termLeases ?? false;

  /**
   * Due waiting rows, oldest due first; with `locked` (PostgreSQL), locked for the transaction and skipping the
   * rows others hold. Its arguments start at `from`: the waiting state, now, the limit, then the values of
   * `except`.
   */
  function dueRows(
    q: Executor,
    locked: boolean,
    columns: readonly string[],
    from: number,
    except?: { column: string; count: number },
  ) {
    let query = q
      .selectFrom(table as LeasedTable)
      .select(columns as never)
      .where('state', '=', as(from))
      .where(q.dynamic.ref(dueColumn), '<=', as(from + 1));
    if (except) query = query.where(q.dynamic.ref(except.column), 'not in', slots(from + 3, except.count));
    query = query.orderBy(q.dynamic.ref(dueColumn)).limit(as(from + 2));
    return locked ? query.forUpdate().skipLocked() : query;
  }

  /**
   * The arguments of `leaseRows`: the leased state, the lease's end and now, then 1 when it counts an attempt,
   * then the term when rows are leased under one.
   */
  function leaseArgs(at: { now: number; leaseUntil: number; owner?: number }): unknown[] {
    const args: unknown[] = [leased, at.leaseUntil, at.now];
    if (leaseCountsAttempt) args.push(1);
    if (termLeases) {
      if (at.owner === undefined) throw new Error(`${table} are leased under a term: a claim must name it`);
      args.push(at.owner);
    }
    return args;
  }

  /** Sets the lease on the rows the caller's `where` picks, and answers their `columns`. */
  function leaseRows(q: Executor, columns: readonly string[]) {
    const owner = leaseCountsAttempt ? 4 : 3;
    return q
      .updateTable(table as LeasedTable)
      .set((eb) => ({
        state: as(0),
        lease_until: as(1),
        ...(leaseCountsAttempt ? { attempts: eb('attempts', '+', as(3)) } : {}),
        ...(termLeases ? { lease_owner: as(owner) } : {}),
        updated_at: as(2),
      }))
      .returning(columns as never);
  }

  /**
   * The terms of leased rows that are no longer held: their term lapsed or is gone (null stands for rows
   * leased without a term whose own lease ended). A read: the sweep takes no write lock when all is well.
   */
  function lapsedOwners(db: Executor, now: number): Promise<{ lease_owner: number | null }[]> {
    return runPrepared(
      db,
      `${table}.lapsedOwners`,
      (q) =>
        q
          .selectFrom(table as LeasedTable)
          .select('lease_owner' as never)
          .where('state', '=', as(0))
          .where((eb) =>
            eb.or([
              eb.and([eb('lease_owner' as never, 'is', null), eb('lease_until', '<', as(1))]),
              eb.and([
                eb('lease_owner' as never, 'is not', null),
                eb.not(
                  eb.exists(
                    eb
                      .selectFrom('lease_holders as h')
                      .select(sql.lit(1).as('held'))
                      .whereRef('h.id', '=', sql.ref(`${table}.lease_owner`) as never)
                      .where('h.lease_until', '>=', as(1)),
                  ),
                ),
              ]),
            ]),
          )
          .groupBy('lease_owner' as never)
          .limit(as(2)),
      [leased, now, 100],
    );
  }

  return {
    /**
     * Leases up to `limit` due rows, oldest due first, in one statement; answers their `columns`. On
     * PostgreSQL the due ids are gathered into an array first, so that the rows are then found by their key:
     * as `id in (…)`, a claim of a thousand rows from a table of under a hundred thousand was planned as a
     * hash join reading the whole table at every claim.
     */
    claimDue<C extends Column<T>>(
      db: Executor,
      dialect: DialectName,
      at: { now: number; leaseUntil: number; limit: number; owner?: number },
      columns: readonly C[],
    ): Promise<Pick<Row<T>, C>[]> {
      const args = leaseArgs(at);
      const from = args.length;
      const locked = dialect === 'postgres';
      return runPrepared(
        db,
        `${table}.claimDue:${columns.join(',')}`,
        (q) => {
          const ids = dueRows(q, locked, ['id'], from);
          const rows = leaseRows(q, columns);
          return locked
            ? rows.where('id', '=', sql<number>`any(array(${ids}))`)
            : rows.where('id', 'in', ids);
        },
        [...args, waiting, at.now, at.limit],
      );
    },

    /**
     * Whether any row is due: a plain read, locking nothing, so that a caller finding none (most passes of an
     * idle or caught-up queue) spares itself a transaction.
     */
    async anyDue(db: Executor, now: number): Promise<boolean> {
      const rows = await runPrepared(db, `${table}.anyDue`, (q) => dueRows(q, false, ['id'], 0), [
        waiting,
        now,
        1,
      ]);
      return rows.length > 0;
    },

    /**
     * Up to `limit` due rows, oldest due first, for a caller that picks among them before it leases them
     * (`lease`); on PostgreSQL they stay locked until its transaction ends, and other workers skip them.
     */
    due<C extends Column<T>>(
      db: Executor,
      dialect: DialectName,
      at: { now: number; limit: number },
      columns: readonly C[],
      except?: Except<T>,
    ): Promise<Pick<Row<T>, C>[]> {
      const skipped = except?.values ?? [];
      const left = skipped.length > 0 ? { column: except!.column, count: skipped.length } : undefined;
      return runPrepared(
        db,
        `${table}.due:${columns.join(',')}:${left ? `${left.column}:${left.count}` : ''}`,
        (q) => dueRows(q, dialect === 'postgres', columns, 0, left),
        [waiting, at.now, at.limit, ...skipped],
      );
    },

    /** Leases the rows among `ids` that are still waiting; answers the `columns` of those it leased. */
    lease<C extends Column<T>>(
      db: Executor,
      ids: readonly number[],
      at: { now: number; leaseUntil: number; owner?: number },
      columns: readonly C[],
    ): Promise<Pick<Row<T>, C>[]> {
      const args = leaseArgs(at);
      const from = args.length;
      const list = [...ids];
      const size = padToShape(list);
      return runPrepared(
        db,
        `${table}.lease:${columns.join(',')}:${size}`,
        (q) =>
          leaseRows(q, columns)
            .where('id', 'in', slots(from + 1, size))
            .where(checkedOnly('state'), '=', as(from)),
        [...args, waiting, ...list],
      );
    },

    /** Rows whose lease expired (their worker stopped mid-send) wait again; answers how many. */
    async releaseExpired(db: Executor, now: number): Promise<number> {
      if (!termLeases) {
        const result = await executePrepared(
          db,
          `${table}.releaseExpired`,
          (q) =>
            q
              .updateTable(table as LeasedTable)
              .set({ state: as(0), lease_until: as(1), updated_at: as(2) })
              .where('state', '=', as(3))
              .where('lease_until', '<', as(2)),
          [waiting, null, now, leased],
        );
        return Number(result.numAffectedRows ?? 0);
      }
      const lapsed = await lapsedOwners(db, now);
      if (lapsed.length === 0) return 0;
      const terms = lapsed.flatMap((r) => (r.lease_owner === null ? [] : [Number(r.lease_owner)]));
      let released = 0;
      // By the terms read, not by re-reading the holders: on PostgreSQL a row another worker re-leased
      // meanwhile is re-checked against these values when its lock is waited for, and so is left alone.
      if (terms.length > 0) {
        const result = await executePrepared(
          db,
          `${table}.releaseTerms:${terms.length}`,
          (q) =>
            q
              .updateTable(table as LeasedTable)
              .set({ state: as(0), lease_until: as(1), lease_owner: as(1), updated_at: as(2) } as never)
              .where('state', '=', as(3))
              .where('lease_owner' as never, 'in', slots(4, terms.length)),
          [waiting, null, now, leased, ...terms],
        );
        released += Number(result.numAffectedRows ?? 0);
      }
      if (terms.length < lapsed.length) {
        const result = await executePrepared(
          db,
          `${table}.releaseUntermed`,
          (q) =>
            q
              .updateTable(table as LeasedTable)
              .set({ state: as(0), lease_until: as(1), updated_at: as(2) })
              .where('state', '=', as(3))
              .where('lease_owner' as never, 'is', null)
              .where('lease_until', '<', as(2)),
          [waiting, null, now, leased],
        );
        released += Number(result.numAffectedRows ?? 0);
      }
      return released;
    },
  };
}

/**
 * A worker's two repository methods on a queue whose claims answer `columns`: claiming due rows for
 * `leaseMs` (under the term `owner` on a queue leased by terms), and making the rows of a worker that died due
 * again.
 */
export function claimsOf<T extends LeasedTable, C extends Column<T>>(
  queue: ReturnType<typeof leaseQueue<T>>,
  columns: readonly C[],
) {
  return {
    /** Leases up to `limit` due rows, oldest due first. */
    claimDue: (
      db: Executor,
      dialect: DialectName,
      now: number,
      leaseMs: number,
      limit: number,
      owner?: number,
    ) => queue.claimDue(db, dialect, { now, leaseUntil: now + leaseMs, limit, owner }, columns),
    /** Rows whose worker died mid-send are due again; answers how many. */
    releaseExpiredLeases: (db: Executor, now: number) => queue.releaseExpired(db, now),
  };
}
