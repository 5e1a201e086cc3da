// Group commit for sends. Committing is the dearest part of a small send on SQLite: every commit writes
// the same hot pages (the tail of campaigns, messages, links, the ledger and their indexes) to the WAL
// again, and checkpoints follow. Sends that arrive in the same event-loop turn therefore share one
// transaction, each inside its own SAVEPOINT: a send that fails (-3, say) is rolled back to its savepoint
// alone, and the others commit. Each send still commits all of its effects or none of them, and no caller
// hears of success before the COMMIT that made its send durable.
import { CompiledQuery } from 'kysely';
import { GroupCommit } from '../shared/group-commit.ts';
import type { Db, Executor } from '../store/db.ts';

interface Job<S, E> {
  run: (tx: Executor) => Promise<unknown>;
  /** The send as data, when it can be written together with others (`writeTogether`). */
  together?: S;
  /** The row that records the send once written (its audit entry), made from its value (`written`). */
  entryOf?: (value: unknown) => E;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes several sends at once in the caller's transaction: each table's rows of the whole group in one
 * statement, where one by one each send costs a round trip per statement (on PostgreSQL, the cost that
 * counts). It writes its sends' entries too (`written` is for sends written one by one), where they cost the
 * least: before a debit, say, rather than while the debit's row is locked. Answers each send's value in
 * order, or undefined when the group cannot be written together (an account cannot pay them all, say); the
 * group is then rolled back and written one by one, which gives each send its own answer.
 */
export type WriteTogether<S> = (tx: Executor, sends: S[]) => Promise<unknown[] | undefined>;

/** What is logged when a group's `writeTogether` failed (`failedTogether`): tests look for it. */
export const failedTogetherMessage =
  'sends arriving together were written one by one: their statement failed';

/** Thrown inside a group's transaction to roll it back when its sends cannot be written together. */
class NotTogether extends Error {}

const savepoint = CompiledQuery.raw('savepoint send_job');
const release = CompiledQuery.raw('release savepoint send_job');
const rollback = CompiledQuery.raw('rollback to savepoint send_job');

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export type SendBatcher = ReturnType<typeof createSendBatcher>;

/**
 * `maxJobs` bounds a group, so one commit never waits behind an unbounded queue. With `writeTogether`, the
 * sends of a group that carry their data (`submit`'s `together`) are written together, in a transaction of
 * their own; the others (and all of them, when they cannot be written together) one by one.
 */
export function createSendBatcher<S = never, E = never>(
  db: Db,
  options: {
    maxJobs?: number;
    writeTogether?: WriteTogether<S>;
    /**
     * Writes the entries of the sends written one by one that succeeded (`submit`'s `entryOf`), all in one
     * call, in the group's transaction after its sends: a send rolled back to its savepoint has none, and one
     * statement for the group costs less than one per send.
     */
    written?: (tx: Executor, entries: E[]) => Promise<void>;
    /**
     * Told when `writeTogether` failed (a statement's error, not a refusal such as an account that cannot pay
     * them all): the group is still written one by one, so nothing is lost, but every group costing twice is a
     * defect to be seen.
     */
    failedTogether?: (error: unknown) => void;
  } = {},
) {
  const { maxJobs = 64, writeTogether, written, failedTogether } = options;

  /** The entries of the jobs that succeeded with `values` (in order), written in `tx`. */
  async function writeEntries(tx: Executor, jobs: Job<S, E>[], values: unknown[]): Promise<void> {
    if (!written) return;
    const entries: E[] = [];
    jobs.forEach((job, i) => {
      if (job.entryOf) entries.push(job.entryOf(values[i]));
    });
    if (entries.length > 0) await written(tx, entries);
  }

  /** Writes the group's sends together; false when they must be written one by one instead. */
  async function runTogether(jobs: Job<S, E>[]): Promise<boolean> {
    let values: unknown[];
    try {
      values = await db.transaction().execute(async (tx) => {
        const values = await writeTogether!(
          tx,
          jobs.map((job) => job.together!),
        ).catch((error: unknown) => {
          failedTogether?.(error);
          throw new NotTogether('the group was not written together', { cause: error });
        });
        if (values === undefined) throw new NotTogether('the group cannot be written together');
        return values;
      });
    } catch (error) {
      // Refused before its commit: rolled back, nothing of it stored, so each send is written alone.
      if (error instanceof NotTogether) return false;
      // The commit itself failed: nothing of the group is stored, so every send fails.
      for (const job of jobs) job.reject(error);
      return true;
    }
    for (let i = 0; i < jobs.length; i++) jobs[i].resolve(values[i]);
    return true;
  }

  async function runGroup(group: Job<S, E>[]): Promise<void> {
    let jobs = group;
    if (writeTogether) {
      const together = group.filter((job) => job.together !== undefined);
      if (together.length >= 2 && (await runTogether(together))) {
        jobs = group.filter((job) => job.together === undefined);
        if (jobs.length === 0) return;
      }
    }
    if (jobs.length === 1) {
      // Alone, a send is its own transaction: no savepoint needed.
      const [job] = jobs;
      try {
        job.resolve(
          await db.transaction().execute(async (tx) => {
            const value = await job.run(tx);
            await writeEntries(tx, [job], [value]);
            return value;
          }),
        );
      } catch (error) {
        job.reject(error);
      }
      return;
    }
    const outcomes: Outcome[] = [];
    try {
      await db.transaction().execute(async (tx) => {
        for (const job of jobs) {
          await tx.executeQuery(savepoint);
          try {
            const value = await job.run(tx);
            await tx.executeQuery(release);
            outcomes.push({ ok: true, value });
          } catch (error) {
            await tx.executeQuery(rollback);
            await tx.executeQuery(release);
            outcomes.push({ ok: false, error });
          }
        }
        const succeeded = jobs.filter((_, i) => outcomes[i].ok);
        const values = outcomes.flatMap((outcome) => (outcome.ok ? [outcome.value] : []));
        await writeEntries(tx, succeeded, values);
      });
    } catch (error) {
      // The commit itself failed: nothing of the group is stored, so every send fails.
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
  }

  // Sends submitted in the same event-loop turn form a group (after the turn's I/O is read, so the requests
  // parsed in that turn join it); sends submitted while a group commits form the next one. runGroup settles
  // every job itself; should it ever throw, its jobs fail with that error rather than hang.
  const groups = new GroupCommit<Job<S, E>>(
    runGroup,
    (error, jobs) => {
      for (const job of jobs) job.reject(error);
    },
    { maxItems: maxJobs },
  );

  return {
    /**
     * Runs `work` in a transaction shared with the sends queued alongside it; resolves after the commit. A
     * send given as data too (`together`) may instead be written with the group's others by `writeTogether`,
     * with the same effects and answer.
     */
    submit<T>(work: (tx: Executor) => Promise<T>, together?: S, entryOf?: (value: T) => E): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        void groups.add({
          run: work,
          together,
          entryOf: entryOf as ((value: unknown) => E) | undefined,
          resolve: resolve as (value: unknown) => void,
          reject,
        });
      });
    },
  };
}
