// A worker's leases, held by its process rather than row by row. The worker registers a term in
// `lease_holders` and a heartbeat renews it with one UPDATE every fifth of the lease, however many rows it
// holds; the rows it leases name the term in `lease_owner` (store/lease-queue.ts). When the process dies or
// freezes, the term is not renewed, and once its `lease_until` has passed every row it held is claimable again
// at the next sweep: a crash delays its work by about one lease (LEASE_SECONDS), not by the longest a row could
// be held.
//
// Fencing: the holder acts on a row (submits it, POSTs it) only while its own record says the term was renewed
// in time, and stops `guardMs` before the end the database holds, so a process that stalled (a pause, a frozen
// VM, a database that stopped answering its heartbeat) drops what it held instead of sending it after another
// process may have taken it. A term that missed its renewal is over for good: the next claim begins a new one,
// and the old term's rows go back to the queue.
//
// A row's outcome the holder could not record is kept by the holder and written when the database takes it
// (src/shared/write-retry.ts), so the term goes on being renewed meanwhile: the row is still the holder's to
// record, and no one else may take it. Only a process that cannot reach the database loses its term (its
// heartbeat fails), and then its late records change nothing on rows another worker took.
//
// A claim that failed may still have committed (the connection cut before its COMMIT's answer came back): rows
// leased under the term that the process never saw. The heartbeat would keep them leased for ever, so a failed
// claim retires its term (`leasing`): it is renewed no more and lapses in the database one lease later, its
// rows go back to the queue at the sweep after that, and what the process does hold under it is acted on until
// its own end as before. The next claim begins a new term.
import { hostname } from 'node:os';
import type { Clock } from '../shared/clock.ts';
import { type Log, silentLog } from '../shared/log.ts';
import type { Db } from './db.ts';
import { executePrepared, runPrepared, slot } from './prepared.ts';

/** The queues whose rows are leased under a term. */
export type TermQueue = 'messages' | 'webhook_deliveries';

export interface LeaseHolderOptions {
  queue: TermQueue;
  /** How long a term outlives its last renewal in the database; past it, other workers take its rows. */
  leaseMs: number;
  /**
   * How long before the end of its lease (as last renewed) the holder stops acting on its rows. It covers
   * the time between the check and the write (a submit goes on the wire in the same turn of the event loop; an
   * HTTP request may first connect) and any difference between the clocks of hosts sharing a database.
   */
  guardMs: number;
}

export type LeaseHolder = ReturnType<typeof createLeaseHolder>;

/** Terms that lapsed this long ago are deleted when a new one begins (their rows were released meanwhile). */
const forgetLapsedMs = 3_600_000;

/** A slot typed as whatever the column it stands for takes. */
const as = (i: number) => slot(i) as never;

export function createLeaseHolder(deps: { db: Db; clock: Clock; options: LeaseHolderOptions }) {
  const { db, clock } = deps;
  const { queue, leaseMs, guardMs } = deps.options;
  if (!(guardMs >= 0 && guardMs < leaseMs)) throw new Error('a lease guard must be shorter than the lease');
  const renewEveryMs = Math.max(100, Math.floor(leaseMs / 5));
  /** Below this much time left, a claim renews the term first rather than lease rows it may soon drop. */
  const claimMarginMs = (leaseMs - guardMs) / 2;

  let current: number | undefined;
  /** Until when the holder may act on rows of `current`: its last renewal's start + lease − guard. */
  let validUntil = 0;
  /** Terms retired after a failed claim, each with until when the holder may still act on its rows. */
  const retired = new Map<number, number>();
  let renewing: Promise<number> | undefined;
  let users = 0;
  let timer: NodeJS.Timeout | undefined;
  let log: Log = silentLog;

  /** Deletes a term's row, so that its rows are released at the next sweep; a failure only delays that. */
  function forget(term: number): void {
    db.deleteFrom('lease_holders')
      .where('id', '=', term)
      .execute()
      .catch(() => {});
  }

  /** Ends the current term: nothing leased under it is acted on any more. */
  function lapse(term: number, why: string): void {
    if (current !== term) return;
    current = undefined;
    validUntil = 0;
    log.warn(
      { queue, term },
      `lease term ${why}: what this process still held under it is given back unsent, for any worker to take`,
    );
    forget(term);
  }

  async function begin(startedAt: number): Promise<number> {
    const [row] = await runPrepared<{ id: number }>(
      db,
      'leaseHolders.begin',
      (q) =>
        q
          .insertInto('lease_holders')
          .values({ queue: as(0), host: as(1), pid: as(2), started_at: as(3), lease_until: as(4) })
          .returning('id'),
      [queue, hostname(), process.pid, startedAt, startedAt + leaseMs],
    );
    current = Number(row.id);
    validUntil = startedAt + leaseMs - guardMs;
    // Housekeeping only: a term whose row is gone counts as lapsed, so this may fail or lag harmlessly.
    await db
      .deleteFrom('lease_holders')
      .where('queue', '=', queue)
      .where('lease_until', '<', startedAt - forgetLapsedMs)
      .execute()
      .catch(() => {});
    return current;
  }

  /**
   * Extends the current term from now, or begins a new one when there is none or it was not renewed in time
   * (here, or in the database as another host's clock sees it). Answers the term.
   */
  async function renew(): Promise<number> {
    const startedAt = clock.now();
    const term = current;
    if (term !== undefined && startedAt >= validUntil) lapse(term, 'was not renewed in time');
    else if (term !== undefined) {
      const result = await executePrepared(
        db,
        'leaseHolders.renew',
        (q) =>
          q
            .updateTable('lease_holders')
            .set({ lease_until: as(0) })
            .where('id', '=', as(1))
            .where('lease_until', '>=', as(2)),
        [startedAt + leaseMs, term, startedAt],
      );
      const renewed = Number(result.numAffectedRows ?? 0) === 1;
      // Renewed in the database, but the answer came after the term had run out here: it ran out.
      if (renewed && current === term && clock.now() < validUntil) {
        validUntil = startedAt + leaseMs - guardMs;
        return term;
      }
      lapse(term, renewed ? 'was renewed too late' : 'had lapsed in the database');
    }
    return begin(startedAt);
  }

  /** Stops renewing the current term without ending it: rows held under it stay actionable until its end. */
  function retire(term: number): void {
    if (current !== term) return;
    const now = clock.now();
    for (const [old, until] of retired) if (until <= now) retired.delete(old);
    retired.set(term, validUntil);
    current = undefined;
    validUntil = 0;
    log.warn(
      { queue, term },
      'a claim failed and may have leased rows unseen: its lease term is renewed no more, so they go back to the queue one lease later',
    );
  }

  function renewOnce(): Promise<number> {
    renewing ??= renew().finally(() => {
      renewing = undefined;
    });
    return renewing;
  }

  /**
   * The term to lease rows under now: renewed first when little of it is left (or more than a whole lease,
   * the clock having gone back since the last renewal: renewing anchors it to the clock again), begun when
   * there is none.
   */
  async function term(): Promise<number> {
    const left = validUntil - clock.now();
    if (current !== undefined && left >= claimMarginMs && left <= leaseMs) return current;
    return renewOnce();
  }

  return {
    term,

    /**
     * Runs `claim` with the term to lease rows under. When it fails, the term is retired (see above): rows it
     * may have leased unseen come back one lease later instead of never.
     */
    async leasing<T>(claim: (term: number) => Promise<T>): Promise<T> {
      const owner = await term();
      try {
        return await claim(owner);
      } catch (error) {
        retire(owner);
        throw error;
      }
    },

    /**
     * Whether rows leased under `term` may still be acted on: it is the current term and was renewed in time,
     * or a retired term whose end has not come. Checked just before each write to the wire; once false for the
     * current term, the term is over.
     */
    holds(term: number | null): boolean {
      if (term === null) return false;
      const until = retired.get(term);
      if (until !== undefined) {
        if (clock.now() < until) return true;
        retired.delete(term);
        return false;
      }
      if (term !== current) return false;
      if (clock.now() < validUntil) return true;
      lapse(term, 'was not renewed in time');
      return false;
    },

    /** Starts the heartbeat (once however many workers of the process use this holder). */
    start(logger?: Log): void {
      if (logger) log = logger;
      users++;
      if (timer) return;
      timer = setInterval(() => {
        renewOnce().catch((error) =>
          log.warn({ queue, err: error }, 'could not renew the lease term; retrying at the next heartbeat'),
        );
      }, renewEveryMs);
      timer.unref();
    },

    /**
     * Stops the heartbeat when its last user stops, and ends the term: whatever is still leased under it (an
     * outcome that could not be recorded) goes back to the queue at the next sweep rather than after the lease.
     */
    async stop(): Promise<void> {
      users = Math.max(0, users - 1);
      if (users > 0 || !timer) return;
      clearInterval(timer);
      timer = undefined;
      await renewing?.catch(() => {});
      const terms = [...retired.keys(), ...(current === undefined ? [] : [current])];
      current = undefined;
      validUntil = 0;
      retired.clear();
      if (terms.length > 0) await db.deleteFrom('lease_holders').where('id', 'in', terms).execute();
    },
  };
}
