// The queues' statements on PostgreSQL must find their rows the way they were written to, whatever the
// planner's statistics say:
// - A delivery worker claims up to a thousand due messages at a time. Written as `id in (select … for update
//   skip locked)`, that claim was planned as a hash join that read the whole `messages` table at every claim
//   while the table held under about a hundred thousand rows (every new or small installation, and every
//   bench round): the claim must find the rows it leases by their key.
// - The statements that record a batch's submits and receipts find their messages by key and then check each
//   one's state. With statistics taken while every message was still queued (as at the start of any
//   campaign), a bare `state in ('submitted', 'sending')` made the planner read every message in that state
//   through `messages_due` instead of looking up the batch's ids: every receipt batch of a campaign read every
//   message in flight. They must read about the rows of their batch only; so must a webhook dispatcher's
//   record of its delivered batch, whose `state = 'sending'` matches the partial index of every leased
//   delivery.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { messagesRepo } from '../../src/delivery/messages.repo.ts';
import { DlrStatus } from '../../src/sms/dlr-status.ts';
import type { Executor } from '../../src/store/db.ts';
import { webhookDeliveriesRepo } from '../../src/webhooks/webhook-deliveries.repo.ts';
import { describeOnPostgres } from '../helpers/harness.ts';
import { counted } from '../helpers/pg-stats.ts';

/**
 * A table of thirty thousand queued messages, due at 1 to 30,000, and its statistics taken; answers the first
 * id.
 */
async function queueMessages(db: Executor): Promise<number> {
  await sql`delete from messages`.execute(db);
  await sql`insert into messages
      (campaign_id, seq, account_id, recipient, text, parts, encoding, state, due_at, updated_at)
    select 1, g, 1, '+3361' || lpad(g::text, 7, '0'), 'hello', 1, 'gsm', 'queued', g, 0
    from generate_series(1, 30000) g`.execute(db);
  await sql`analyze messages`.execute(db);
  const { rows } = await sql<{ first: string }>`select min(id) as first from messages`.execute(db);
  return Number(rows[0].first);
}

describeOnPostgres("the queues' statements", (h) => {
  it('a claim leases a thousand of thirty thousand queued messages without reading the table whole', async () => {
    const { db } = h().deps.store;
    await queueMessages(db);
    let claimed: Awaited<ReturnType<typeof messagesRepo.claimDue>> = [];
    const { seqScans } = await counted(db, 'messages', async (tx) => {
      claimed = await messagesRepo.claimDue(tx, 'postgres', 1_000_000, 15_000, 1000, 7);
    });
    expect(claimed).toHaveLength(1000);
    expect(Math.max(...claimed.map((m) => Number(m.due_at)))).toBe(1000);
    expect(claimed.every((m) => Number(m.lease_owner) === 7 && m.attempts === 1)).toBe(true);
    expect(seqScans).toBe(0);
  });

  it('submits and receipts recorded for a batch read only their batch, whatever the statistics say of the states', async () => {
    const { db } = h().deps.store;
    const first = await queueMessages(db);
    const id = (n: number) => Number(first) + n;
    // 5,000 in flight under term 7, 5,000 submitted awaiting their receipt; the statistics still say queued.
    await sql`update messages set state = 'sending', lease_owner = 7
      where id between ${id(0)} and ${id(4999)}`.execute(db);
    await sql`update messages set state = 'submitted' where id between ${id(5000)} and ${id(9999)}`.execute(
      db,
    );

    const batch = Array.from({ length: 128 }, (_, i) => i);
    const submits = batch.map((i) => ({
      id: id(i),
      smscId: `smsc-${i}`,
      country: 'FR',
      owner: 7,
      connector: null,
      route: null,
    }));
    let marked = new Set<number>();
    const { indexFetched: submitRows } = await counted(db, 'messages', async (tx) => {
      marked = await messagesRepo.markSubmitted(tx, submits, 1);
    });
    expect(marked.size).toBe(128);

    let finalized: number[] = [];
    const { indexFetched: receiptRows } = await counted(db, 'messages', async (tx) => {
      finalized = await messagesRepo.finalizeMany(
        tx,
        batch.map((i) => id(5000 + i)),
        'delivered',
        DlrStatus.delivered,
        2,
      );
    });
    expect(finalized).toHaveLength(128);

    // A key lookup per message (the padding of a chunk repeats its last row); the states read whole would be
    // 5,000 each.
    expect(submitRows).toBeLessThanOrEqual(256);
    expect(receiptRows).toBeLessThanOrEqual(256);
  });

  it('webhook deliveries recorded as delivered: their batch only, not every leased delivery', async () => {
    const { db } = h().deps.store;
    const account = await h().account();
    const [{ id: webhookId }] = (
      await sql<{ id: string }>`insert into webhooks
          (account_id, type, url, secret, status, created_at, updated_at)
        values (${account.id}, 'DLR', 'http://127.0.0.1:9/', 's', 'active', 0, 0) returning id`.execute(db)
    ).rows;
    const { rows } = await sql<{ id: string }>`insert into webhook_deliveries
        (webhook_id, account_id, event_type, payload, state, attempts, next_attempt_at, created_at, updated_at)
      select ${webhookId}, ${account.id}, 'DLR', '{}', 'pending', 0, g, 0, 0
      from generate_series(1, 20000) g returning id`.execute(db);
    await sql`analyze webhook_deliveries`.execute(db);
    const ids = rows.map((r) => Number(r.id));
    // 5,000 leased under term 9, the statistics still saying none is.
    await sql`update webhook_deliveries set state = 'sending', lease_owner = 9, lease_until = 1
      where id between ${ids[0]} and ${ids[4999]}`.execute(db);

    let done: number[] = [];
    const { indexFetched: fetched } = await counted(db, 'webhook_deliveries', async (tx) => {
      done = await webhookDeliveriesRepo.markDelivered(tx, ids.slice(0, 128), 9, 2);
    });
    expect(done).toHaveLength(128);
    expect(fetched).toBeLessThanOrEqual(256);
  });
});
