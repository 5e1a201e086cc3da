// SQL of the message queue: queuing a campaign's messages, claiming due ones by lease, recording their
// submits and final states, holding and cancelling them, and the queue's own gauges. No rules here.
import { type Selectable, sql } from 'kysely';
import { DlrStatus } from '../sms/dlr-status.ts';
import { insertRows } from '../store/bulk-insert.ts';
import { checkedOnly } from '../store/checked-only.ts';
import type { DialectName, Executor } from '../store/db.ts';
import { claimsOf, leaseQueue } from '../store/lease-queue.ts';
import { runPrepared, shapedChunks, slot, slots } from '../store/prepared.ts';
import type { MessagesTable } from '../store/schema.ts';
import { chunks, maxLookupIds } from './row-batches.ts';

/** Submits recorded per statement: 3 parameters a row, well under every driver's limit. */
const maxSubmittedRows = 512;

/** What the worker needs of a message it leased. */
const claimedColumns = [
  'id',
  'campaign_id',
  'account_id',
  'recipient',
  'gsmsmsid',
  'text',
  'encoding',
  'due_at',
  'attempts',
  'lease_owner',
  'parts',
  'credits',
] as const;

export type ClaimedMessage = Pick<Selectable<MessagesTable>, (typeof claimedColumns)[number]>;

/** Queued messages, due at `due_at`; a claim counts the attempt and names the worker's lease term. */
const messageQueue = leaseQueue({
  table: 'messages',
  waiting: 'queued',
  leased: 'sending',
  dueColumn: 'due_at',
  leaseCountsAttempt: true,
  termLeases: true,
});

/** Message columns in the order `insertMessages` takes each row's values. */
const messageColumns = [
  'campaign_id',
  'seq',
  'account_id',
  'recipient',
  'gsmsmsid',
  'contact_id',
  'text',
  'parts',
  'encoding',
  'state',
  'due_at',
  'updated_at',
  'credits',
] as const;
/** 13 columns × 1,000 rows stays well under SQLite's 32,766 bound parameters. */
const messageBatchRows = 1000;

export const messagesRepo = {
  /** Rows as values in `messageColumns` order, 1,000 per statement compiled once per size. */
  insertMessages(db: Executor, rows: readonly unknown[][]): Promise<void> {
    return insertRows(db, 'messages', messageColumns, rows, messageBatchRows);
  },

  /**
   * Cancels the campaign's messages that no worker has ever taken (queued, never attempted) and returns how
   * many. On PostgreSQL a row a worker holds is waited for and then re-read, so it is skipped once taken.
   */
  async cancelUntaken(db: Executor, accountId: number, campaignId: number, now: number): Promise<number> {
    const result = await db
      .updateTable('messages')
      .set({ state: 'cancelled', updated_at: now })
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('state', '=', 'queued')
      .where('attempts', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /**
   * Every account's messages per unfinished state (queued ones also counted by whether they are due at
   * `now`), and per final state among those due since `finishedSince`: two ranges of the (state, due_at)
   * index, so the read grows with the queue and the window, never with the table.
   */
  queueStates(db: Executor, now: number, finishedSince: number) {
    const open = db
      .selectFrom('messages')
      .select((eb) => [
        'state',
        eb.fn.countAll<number>().as('n'),
        sql<number>`sum(case when due_at <= ${now} then 1 else 0 end)`.as('due'),
      ])
      .where('state', 'in', ['queued', 'held', 'sending', 'submitted'])
      .groupBy('state');
    const finished = db
      .selectFrom('messages')
      .select((eb) => ['state', eb.fn.countAll<number>().as('n'), sql<number>`0`.as('due')])
      .where('state', 'in', ['delivered', 'failed', 'expired'])
      .where('due_at', '>=', finishedSince)
      .groupBy('state');
    return open.unionAll(finished).execute();
  },

  /** Claims and releases of due messages (see store/lease-queue.ts). */
  ...claimsOf(messageQueue, claimedColumns),

  /**
   * Moves leased messages to a new state; only rows still leased under the term `owner` are touched (one that
   * went back to the queue and was taken by another worker is that worker's to record). Answers how many moved.
   */
  async setLeasedState(
    db: Executor,
    ids: number[],
    fields: Pick<Selectable<MessagesTable>, 'state'> &
      Partial<Pick<Selectable<MessagesTable>, 'dlr_status' | 'smsc_id' | 'due_at' | 'error'>>,
    now: number,
    owner: number | null,
  ): Promise<number> {
    let moved = 0;
    for (const chunk of chunks(ids)) {
      const result = await db
        .updateTable('messages')
        .set({ ...fields, lease_until: null, lease_owner: null, updated_at: now })
        .where('id', 'in', chunk)
        .where(checkedOnly('state'), '=', 'sending')
        .where('lease_owner', owner === null ? 'is' : '=', owner)
        .executeTakeFirst();
      moved += Number(result.numUpdatedRows);
    }
    return moved;
  },

  /**
   * Leased messages the SMSC accepted: submitted, with the SMSC id of their first part, if still leased under
   * the term `owner` that sent them; answers the ids it so marked. Set-wise: one UPDATE … FROM (VALUES …) per
   * chunk, each row its own SMSC id, country and term (both dialects name a VALUES list's columns column1,
   * column2, …). Chunks are padded to a power of two by repeating their last row, so a handful of statement
   * texts serve every batch size.
   */
  async markSubmitted(
    db: Executor,
    submitted: {
      id: number;
      smscId: string;
      country: string | null;
      owner: number | null;
      connector: string | null;
      route: string | null;
    }[],
    now: number,
  ): Promise<Set<number>> {
    const marked = new Set<number>();
    for (const rows of shapedChunks(submitted, maxSubmittedRows)) {
      // Arguments: the four of the SET and WHERE, then six per row.
      const args: unknown[] = ['submitted', DlrStatus.sent, now, 'sending'];
      for (const r of rows) args.push(r.id, r.smscId, r.country, r.owner, r.connector, r.route);
      const updated = await runPrepared<{ id: number }>(
        db,
        `delivery.markSubmitted.${rows.length}`,
        (q) => {
          const at = (row: number, column: number) => slot(4 + row * 6 + column);
          const values = sql.join(
            rows.map((_, i) =>
              i === 0
                ? sql`(cast(${at(i, 0)} as bigint), cast(${at(i, 1)} as text), cast(${at(i, 2)} as text), cast(${at(i, 3)} as bigint), cast(${at(i, 4)} as text), cast(${at(i, 5)} as text))`
                : sql`(${at(i, 0)}, ${at(i, 1)}, ${at(i, 2)}, ${at(i, 3)}, ${at(i, 4)}, ${at(i, 5)})`,
            ),
          );
          // Fenced: only a message still leased under the recording worker's term is marked.
          const statement = sql<{ id: number }>`update messages set state = ${slot(0)},
            dlr_status = ${slot(1)}, error = null, smsc_id = v.column2, lease_until = null,
            updated_at = ${slot(2)}, sent_at = ${slot(2)}, country = v.column3, lease_owner = null,
            connector = v.column5, route = v.column6
            from (values ${values}) as v
            where messages.id = v.column1 and ${checkedOnly('messages.state')} = ${slot(3)}
              and messages.lease_owner = v.column4
            returning messages.id`;
          return { compile: () => statement.compile(q) };
        },
        args,
      );
      for (const row of updated) marked.add(Number(row.id));
    }
    return marked;
  },

  /** Messages due by `now` and not yet taken by a worker, counted up to `upTo` (the index range, no further). */
  async countDue(db: Executor, now: number, upTo: number): Promise<number> {
    const [row] = await runPrepared<{ n: number }>(
      db,
      'delivery.countDue',
      (q) =>
        q
          .selectFrom((inner) =>
            inner
              .selectFrom('messages')
              .select('id')
              .where('state', '=', slot(0))
              .where('due_at', '<=', slot(1) as unknown as number)
              .limit(slot(2) as unknown as number)
              .as('due'),
          )
          .select((eb) => eb.fn.countAll<number>().as('n')),
      ['queued', now, upTo],
    );
    return Number(row?.n ?? 0);
  },

  /** `finalize` for several messages at once; returns the ids that changed (those not final before). */
  async finalizeMany(db: Executor, ids: readonly number[], state: string, dlrStatus: number, now: number) {
    const changed: number[] = [];
    for (const chunk of shapedChunks(ids, maxLookupIds)) {
      const size = chunk.length;
      const rows = await runPrepared<{ id: number }>(
        db,
        `delivery.finalizeMany.${size}`,
        (q) =>
          q
            .updateTable('messages')
            .set({
              state: slot(0),
              dlr_status: slot(1) as unknown as number,
              // Written into the statement: a prepared statement binds slots only.
              error: sql<null>`null`,
              updated_at: slot(2) as unknown as number,
            })
            .where('id', 'in', slots(7, size))
            .where((eb) =>
              eb.or([
                eb(checkedOnly('state'), 'in', [slot(3), slot(4)]),
                eb.and([eb(checkedOnly('state'), '=', slot(5)), eb('error', '=', slot(6))]),
              ]),
            )
            .returning('id'),
        [state, dlrStatus, now, 'submitted', 'sending', 'expired', receiptTimeoutError, ...chunk],
      );
      for (const row of rows) changed.push(row.id);
    }
    return changed;
  },

  /**
   * Records a final state once: a message already final is left as it is, except one closed for want of a
   * receipt (`closeUnreceipted`), which its real receipt replaces. Returns whether it changed.
   */
  async finalize(db: Executor, id: number, state: string, dlrStatus: number, now: number): Promise<boolean> {
    return (await messagesRepo.finalizeMany(db, [id], state, dlrStatus, now)).length > 0;
  },

  /**
   * Closes up to `limit` messages submitted at or before `sentBy` that still await their receipt: `expired`,
   * DLR 12, `error` saying why (`receiptTimeoutError`, which lets a late receipt replace it). A message is
   * sent after it is due, so `due_at` bounds the range of the queue's index (state, due_at) the search reads.
   * The rows are locked as they are chosen on PostgreSQL (one a receipt is finalizing is skipped), so they
   * are still `submitted` when updated; SQLite has one writer. Answers what each closed message's DLR event
   * needs.
   */
  closeUnreceipted(db: Executor, dialect: DialectName, sentBy: number, now: number, limit: number) {
    let awaiting = unreceipted(db, sentBy).orderBy('due_at').limit(limit);
    if (dialect === 'postgres') awaiting = awaiting.forUpdate().skipLocked();
    return db
      .updateTable('messages')
      .set({ state: 'expired', dlr_status: DlrStatus.expired, error: receiptTimeoutError, updated_at: now })
      .where('id', 'in', awaiting)
      .returning(['id', 'account_id', 'campaign_id', 'recipient', 'gsmsmsid'])
      .execute();
  },

  /** Whether any message submitted at or before `sentBy` still awaits its receipt (one index probe). */
  async anyUnreceipted(db: Executor, sentBy: number): Promise<boolean> {
    return (await unreceipted(db, sentBy).limit(1).executeTakeFirst()) !== undefined;
  },

  /**
   * The account and message that last wrote to a number, through `connector` when one is named: replies are
   * theirs. The recipient index walks the number's messages newest first, so the connector costs a filter.
   */
  lastMessageTo(db: Executor, number: string, connector?: string) {
    let query = db
      .selectFrom('messages')
      .select(['account_id', 'campaign_id', 'gsmsmsid'])
      .where('recipient', '=', number);
    if (connector !== undefined) query = query.where('connector', '=', connector);
    return query.orderBy('id', 'desc').limit(1).executeTakeFirst();
  },

  /**
   * Moves the account's messages in `from` to `to` (queued to held, or back), their due time kept; answers how
   * many. Workers claim only `queued` rows, so a held message is never taken; one a worker holds is `sending`
   * and is left to finish. On PostgreSQL a row a claim has locked is waited for, then re-read and skipped.
   */
  async moveAccountMessages(
    db: Executor,
    accountId: number,
    from: 'queued' | 'held',
    to: 'queued' | 'held',
    now: number,
    exceptCampaigns: readonly number[] = [],
  ): Promise<number> {
    let query = db
      .updateTable('messages')
      .set({ state: to, updated_at: now })
      .where('state', '=', from)
      .where('account_id', '=', accountId);
    if (exceptCampaigns.length > 0) query = query.where('campaign_id', 'not in', exceptCampaigns);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /** The parts of the account's queued messages already due at `now` (released at once: an unlock, an approval). */
  async dueParts(db: Executor, accountId: number, now: number): Promise<number> {
    const row = await db
      .selectFrom('messages')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('parts'), sql<number>`0`).as('parts'))
      .where('account_id', '=', accountId)
      .where('state', '=', 'queued')
      .where('due_at', '<=', now)
      .executeTakeFirst();
    return Number(row?.parts ?? 0);
  },

  /**
   * Spreads those messages from `start`, oldest due first: each due when the parts before it have had their
   * slots at `partsPerSecond` (as a paced send's, campaigns/send-pacing.ts). Answers how many.
   */
  async spreadDue(
    db: Executor,
    accountId: number,
    now: number,
    start: number,
    partsPerSecond: number,
  ): Promise<number> {
    const result = await sql`
      update messages set due_at = spread.slot
      from (
        select id, cast(${start} as bigint) + cast(coalesce(sum(parts) over (
          order by due_at, id rows between unbounded preceding and 1 preceding), 0) * 1000
          / cast(${partsPerSecond} as bigint) as bigint) as slot
        from messages
        where account_id = ${accountId} and state = 'queued' and due_at <= ${now}
      ) as spread
      where messages.id = spread.id`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  },

  /**
   * Moves one campaign's `held` messages (held for moderation) to `queued` (approved, due when they were) or
   * `cancelled` (refused); answers how many.
   */
  async moveHeldCampaign(
    db: Executor,
    campaignId: number,
    to: 'queued' | 'cancelled',
    now: number,
  ): Promise<number> {
    const result = await db
      .updateTable('messages')
      .set({ state: to, updated_at: now })
      .where('campaign_id', '=', campaignId)
      .where('state', '=', 'held')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /**
   * Up to `limit` campaigns of the account with a message to `recipient` that no worker has taken (queued or
   * held, never attempted): found through the recipient's index, the state only checked.
   */
  async untakenCampaignsTo(
    db: Executor,
    accountId: number,
    recipient: string,
    limit: number,
  ): Promise<number[]> {
    const rows = await db
      .selectFrom('messages')
      .select('campaign_id')
      .distinct()
      .where('recipient', '=', recipient)
      .where('account_id', '=', accountId)
      .where(checkedOnly('state'), 'in', ['queued', 'held'])
      .where('attempts', '=', 0)
      .limit(limit)
      .execute();
    return rows.map((r) => Number(r.campaign_id));
  },

  /** Where the first `limit` messages of a campaign stand, in order: state, receipt status and last change. */
  statesOfCampaign(db: Executor, campaignId: number, limit: number) {
    return db
      .selectFrom('messages')
      .select(['state', 'dlr_status', 'updated_at'])
      .where('campaign_id', '=', campaignId)
      .orderBy('seq')
      .limit(limit)
      .execute();
  },

  /** Recipients of the campaign's messages whose receipt status is `dlrStatus`, after `afterSeq` (keyset). */
  withStatusAfter(
    db: Executor,
    accountId: number,
    campaignId: number,
    dlrStatus: number,
    afterSeq: number,
    limit: number,
  ) {
    return db
      .selectFrom('messages')
      .select(['seq', 'recipient'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', dlrStatus)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  },
};

/** Submitted messages sent at or before `sentBy` (a message is sent after it is due: `due_at` bounds the search). */
function unreceipted(db: Executor, sentBy: number) {
  return db
    .selectFrom('messages')
    .select('id')
    .where('state', '=', 'submitted')
    .where('due_at', '<=', sentBy)
    .where('sent_at', '<=', sentBy);
}

/**
 * The `error` of a message closed because its receipt did not come within DLR_WAIT. It tells such a message
 * apart from one a carrier reported expired: only the former may still take a receipt that comes late.
 */
export const receiptTimeoutError = 'no receipt within DLR_WAIT';
