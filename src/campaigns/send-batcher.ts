// Group commit for sends. Committing is the dearest part of a small send on SQLite: every commit writes
// the same hot pages (the tail of campaigns, messages, links, the ledger and their indexes) to the WAL
// again, and checkpoints follow. Sends that arrive in the same event-loop turn therefore share one
// transaction, each inside its own SAVEPOINT: a send that fails (-3, say) is rolled back to its savepoint
// alone, and the others commit. Each send still commits all of its effects or none of them, and no caller
// hears of success before the COMMIT that made its send durable.
import { CompiledQuery } from 'kysely';
import { GroupCommit } from '../shared/group-commit.ts';
import type { Db, Executor } from '../store/db.ts';

interface Job {
  run: (tx: Executor) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const savepoint = CompiledQuery.raw('savepoint send_job');
const release = CompiledQuery.raw('release savepoint send_job');
const rollback = CompiledQuery.raw('rollback to savepoint send_job');

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export type SendBatcher = ReturnType<typeof createSendBatcher>;

/** `maxJobs` bounds a group, so one commit never waits behind an unbounded queue. */
export function createSendBatcher(db: Db, maxJobs = 64) {
  async function runGroup(jobs: Job[]): Promise<void> {
    if (jobs.length === 1) {
      // Alone, a send is its own transaction: no savepoint needed.
      const [job] = jobs;
      try {
        job.resolve(await db.transaction().execute((tx) => job.run(tx)));
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
  const groups = new GroupCommit<Job>(
    runGroup,
    (error, jobs) => {
      for (const job of jobs) job.reject(error);
    },
    { maxItems: maxJobs },
  );

  return {
    /** Runs `work` in a transaction shared with the sends queued alongside it; resolves after the commit. */
    submit<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        void groups.add({ run: work, resolve: resolve as (value: unknown) => void, reject });
      });
    },
  };
}
