// The dispatcher asks, at every wake-up, whether an event waits for its fan-out. On PostgreSQL that probe must
// read the partial index of waiting events, whatever the table's statistics say: a new database is analyzed
// while every event waits (store/first-statistics.ts), and a plan that reads `events` from its start then
// passes every event already fanned out, the whole table, at each probe.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { eventToFanOutProbe, webhookDeliveriesRepo } from '../../src/webhooks/webhook-deliveries.repo.ts';
import { describeOnPostgres } from '../helpers/harness.ts';

describeOnPostgres('the fan-out probe', (h) => {
  it('reads the waiting events through their partial index, not events from its start, after statistics taken while all waited', async () => {
    const { db } = h().deps.store;
    const insert = (from: number, to: number) =>
      sql`insert into events (account_id, campaign_id, type, payload, created_at)
        select 1, null, 'DLR', '{}', g from generate_series(${from}::int, ${to}::int) g`.execute(db);
    await insert(1, 1500);
    await sql`analyze events`.execute(db);
    await insert(1501, 30_000);
    await sql`update events set fanned_out = 1 where id <= (select max(id) - 5 from events)`.execute(db);

    const compiled = eventToFanOutProbe(db).compile();
    const values = compiled.parameters.map((_, i) => (i === 0 ? 0 : 1));
    const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) ${sql.raw(
      compiled.sql.replace(/\$(\d+)/g, (_, n: string) => String(values[Number(n) - 1])),
    )}`.execute(db);
    const plan = JSON.stringify(rows[0]['QUERY PLAN']);
    expect(plan).toContain('events_to_fan_out');
    expect(plan).not.toContain('Seq Scan');
    expect(await webhookDeliveriesRepo.anyEventToFanOut(db)).toBe(true);
  });
});
