// A delivery worker claims up to a thousand due messages at a time. On PostgreSQL, written as `id in
// (select … for update skip locked)`, that claim was planned as a hash join that read the whole `messages`
// table at every claim while the table held under about a hundred thousand rows (every new or small
// installation, and every bench round): the claim must find the rows it leases by their key.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { messagesRepo } from '../../src/delivery/messages.repo.ts';
import { describeOnPostgres } from '../helpers/harness.ts';

describeOnPostgres('the delivery claim', (h) => {
  it('leases a thousand of thirty thousand queued messages without reading the table whole', async () => {
    const { db } = h().deps.store;
    await sql`insert into messages
        (campaign_id, seq, account_id, recipient, text, parts, encoding, state, due_at, updated_at)
      select 1, g, 1, '+3361' || lpad(g::text, 7, '0'), 'hello', 1, 'gsm', 'queued', g, 0
      from generate_series(1, 30000) g`.execute(db);
    await sql`analyze messages`.execute(db);

    // The count is read before and after the claim, in one transaction: PostgreSQL 15's
    // `pg_stat_xact_user_tables` also shows this connection's counts of earlier transactions that it has
    // not yet flushed (at most once a second, later on a busy machine), such as the app's first reads of
    // the empty table.
    const { claimed, seqScans } = await db.transaction().execute(async (tx) => {
      const scans = async () => {
        const { rows } = await sql<{ n: string }>`
          select seq_scan as n from pg_stat_xact_user_tables where relid = 'messages'::regclass`.execute(tx);
        return Number(rows[0].n);
      };
      const before = await scans();
      const rows = await messagesRepo.claimDue(tx, 'postgres', 1_000_000, 15_000, 1000, 7);
      return { claimed: rows, seqScans: (await scans()) - before };
    });
    expect(claimed).toHaveLength(1000);
    expect(Math.max(...claimed.map((m) => Number(m.due_at)))).toBe(1000);
    expect(claimed.every((m) => Number(m.lease_owner) === 7 && m.attempts === 1)).toBe(true);
    expect(seqScans).toBe(0);
  });
});
