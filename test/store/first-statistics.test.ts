// A new PostgreSQL database has each hot table analyzed as soon as it holds rows, so the planner looks up a
// batch of keys through the index from the start rather than after autovacuum's first round.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLog } from '../../src/shared/log.ts';
import { createFirstStatistics } from '../../src/store/first-statistics.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

describe.skipIf(!inject('pgUrl'))('first statistics (PostgreSQL)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('postgres');
  });
  afterAll(() => h.close());

  const analyzed = async (table: string) => {
    const { rows } = await sql<{ done: boolean }>`
      select (last_analyze is not null or last_autoanalyze is not null) as done
      from pg_stat_user_tables where schemaname = current_schema() and relname = ${table}`.execute(
      h.deps.store.db,
    );
    return rows[0]?.done === true;
  };

  it('a campaigns table past a thousand rows is analyzed within seconds; an empty one is left to autovacuum', async () => {
    const a = await h.account({ credits: 10 });
    const db = h.deps.store.db;
    const row = (i: number) => ({
      account_id: a.id,
      billed_account_id: a.id,
      sender: null,
      text: `t${i}`,
      pushtype: 'alert',
      unicode: 0,
      cost: 0,
      total: 1,
      sent: 1,
      blacklisted: 0,
      duplicated: 0,
      invalid: 0,
      npai: 0,
      not_allowed: 0,
      status: 'scheduled',
      due_at: 0,
      created_at: 0,
    });
    await db
      .insertInto('campaigns')
      .values(Array.from({ length: 1500 }, (_, i) => row(i)))
      .execute();
    expect(await analyzed('campaigns')).toBe(false);
    const job = createFirstStatistics({ db, dialect: 'postgres', log: silentLog });
    job.start();
    try {
      await waitFor(() => analyzed('campaigns'), 'campaigns analyzed', 20_000);
      expect(await analyzed('messages')).toBe(false);
    } finally {
      await job.stop();
    }
  });
});
