// SQL of delivery's tables: queuing messages, claiming due ones by lease, recording submits and receipts,
// MO fragments, and the reads campaigns ask of their messages. No rules here.
import { type Selectable, sql } from 'kysely';
import type { Page } from '../shared/paging.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { insertRows } from '../store/bulk-insert.ts';
import { contains } from '../store/contains.ts';
import type { DialectName, Executor } from '../store/db.ts';
import { claimsOf, leaseQueue } from '../store/lease-queue.ts';
import { runPrepared, shapedChunks, slot, slots } from '../store/prepared.ts';
import { deleteAged } from '../store/purge.ts';
import type {
  MessagePartsTable,
  MessagesTable,
  MoFragmentsTable,
  OrphanReceiptsTable,
  RepliesTable,
} from '../store/schema.ts';

export type NewReply = Omit<Selectable<RepliesTable>, 'id'>;
export type ReplyType = 'MO' | 'STOP';

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

const batchRows = 500;

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
] as const;
/** 12 columns × 1,000 rows stays well under SQLite's 32,766 bound parameters. */
const messageBatchRows = 1000;

const partColumns = ['message_id', 'part_no', 'smsc_id', 'stat', 'dlr_status', 'updated_at'] as const;

/**
 * A part awaiting its receipt, with what the receipt's event needs of its message and the connector its
 * message went out through (null before CONNECTORS_FILE named connectors, migration 021).
 */
export interface OpenPart
  extends Pick<Selectable<MessagePartsTable>, 'id' | 'message_id'>,
    Pick<
      Selectable<MessagesTable>,
      'campaign_id' | 'account_id' | 'recipient' | 'gsmsmsid' | 'parts' | 'connector'
    > {}

/** What a receipt's event needs of an open part's message, and the connector that carried it. */
const openPartMessageColumns = [
  'p.message_id',
  'm.campaign_id',
  'm.account_id',
  'm.recipient',
  'm.gsmsmsid',
  'm.parts',
  'm.connector',
] as const;

/** SMSC ids looked up in one statement (a power of two). */
const maxLookupIds = 512;

function chunks<T>(items: T[], size = batchRows): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export const deliveryRepo = {
  /**
   * Retention: deletes up to `limit` of the account's messages due before `before` that are done with (not
   * queued, sending or held), their parts first; returns how many messages went.
   */
  async purgeMessages(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    const rows = await db
      .selectFrom('messages')
      .select('id')
      .where(accountKey, '=', accountId)
      .where('due_at', '<', before)
      .where('state', 'not in', unfinishedStates)
      .limit(limit)
      .execute();
    return deleteMessages(db, rows);
  },

  /** Retention: deletes up to `limit` messages of a campaign that are done with, their parts first. */
  async purgeCampaignMessages(db: Executor, campaignId: number, limit: number): Promise<number> {
    const rows = await db
      .selectFrom('messages')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .where('state', 'not in', unfinishedStates)
      .limit(limit)
      .execute();
    return deleteMessages(db, rows);
  },

  /** Whether a campaign still has a message a worker may send. */
  async hasUnfinished(db: Executor, campaignId: number): Promise<boolean> {
    const row = await db
      .selectFrom('messages')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .where('state', 'in', unfinishedStates)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Retention: deletes up to `limit` of the account's replies received before `before`; how many. */
  purgeReplies(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    const replies = { table: 'replies', column: 'received_at', account: 'expression' } as const;
    return deleteAged(db, replies, accountId, before, limit);
  },

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

  /** Messages of the campaigns per state and receipt status, in one grouped query. */
  stateCounts(db: Executor, accountId: number, campaignIds: readonly number[]) {
    return db
      .selectFrom('messages')
      .select(['campaign_id', 'state', 'dlr_status'])
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max<number>('attempts').as('attempts')])
      .where('account_id', '=', accountId)
      .where('campaign_id', 'in', campaignIds)
      .groupBy(['campaign_id', 'state', 'dlr_status'])
      .execute();
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

  /** A page (offset paging) of the campaign's messages whose receipt status is `dlrStatus`, in seq order. */
  withStatusPage(db: Executor, accountId: number, campaignId: number, dlrStatus: number, page: Page) {
    return db
      .selectFrom('messages')
      .select(['recipient', 'gsmsmsid', 'contact_id', 'updated_at'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', dlrStatus)
      .orderBy('seq')
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /**
   * A page (offset paging) of the campaign's messages in seq order, through its unique key `(campaign_id,
   * seq)`; only those reporting the DLR code `status` when given (see `reportedStatus`).
   */
  campaignMessagesPage(
    db: Executor,
    accountId: number,
    campaignId: number,
    status: number | undefined,
    page: Page,
  ) {
    let query = db
      .selectFrom('messages')
      .select([
        'id',
        'seq',
        'recipient',
        'gsmsmsid',
        'state',
        'dlr_status',
        'due_at',
        'updated_at',
        'sent_at',
      ])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId);
    if (status !== undefined) query = query.where(reportedStatusSql, '=', status);
    return query.orderBy('seq').limit(page.length).offset(page.start).execute();
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

  /** One page of a campaign's messages after `afterSeq`, in seq order (keyset paging on the unique key). */
  messagesAfter(db: Executor, accountId: number, campaignId: number, afterSeq: number, limit: number) {
    return db
      .selectFrom('messages')
      .select(['seq', 'recipient', 'gsmsmsid', 'text', 'parts', 'encoding', 'state', 'connector', 'route'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  },

  /** Claims and releases of due messages (see store/lease-queue.ts). */
  ...claimsOf(messageQueue, claimedColumns),

  /** Inserts the parts the SMSC accepted (a whole batch of messages at once). */
  async insertParts(
    db: Executor,
    parts: Pick<Selectable<MessagePartsTable>, 'message_id' | 'part_no' | 'smsc_id'>[],
    now: number,
  ): Promise<void> {
    const rows = parts.map((p) => [p.message_id, p.part_no, p.smsc_id, null, null, now]);
    await insertRows(db, 'message_parts', partColumns, rows, batchRows);
  },

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
        .where('state', '=', 'sending')
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
            where messages.id = v.column1 and messages.state = ${slot(3)} and messages.lease_owner = v.column4
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

  /** Whether any receipt waits as an orphan (mostly none: then no submit needs to look for its own). */
  async hasOrphans(db: Executor): Promise<boolean> {
    const rows = await runPrepared(
      db,
      'delivery.hasOrphans',
      (q) =>
        q
          .selectFrom('orphan_receipts')
          .select('id')
          .limit(slot(0) as unknown as number),
      [1],
    );
    return rows.length > 0;
  },

  /**
   * The parts still awaiting their receipt under any of `smscIds`, with their SMSC id, what a receipt's
   * event needs of their message and the connector that carried it: one statement for a batch of receipts. The list is padded to a power of
   * two (repeating its last id), so a few compiled shapes serve every batch size.
   */
  async findOpenParts(db: Executor, smscIds: string[]): Promise<(OpenPart & { smsc_id: string })[]> {
    const found: (OpenPart & { smsc_id: string })[] = [];
    for (const ids of shapedChunks(smscIds, maxLookupIds)) {
      const size = ids.length;
      const rows = await runPrepared<OpenPart & { smsc_id: string }>(
        db,
        `delivery.findOpenParts.${size}`,
        (q) =>
          q
            .selectFrom('message_parts as p')
            .innerJoin('messages as m', 'm.id', 'p.message_id')
            .select(['p.id', 'p.smsc_id', ...openPartMessageColumns])
            .where(
              'p.smsc_id',
              'in',
              ids.map((_, i) => slot(i)),
            )
            .where('p.dlr_status', 'is', null),
        ids,
      );
      found.push(...rows);
    }
    return found;
  },

  async updatePart(db: Executor, id: number, stat: string, dlrStatus: number, now: number): Promise<void> {
    await deliveryRepo.updateParts(db, [id], stat, dlrStatus, now);
  },

  /** The receipts of several parts with the same stat and status, in one statement per chunk. */
  async updateParts(db: Executor, ids: readonly number[], stat: string, dlrStatus: number, now: number) {
    for (const chunk of shapedChunks(ids, maxLookupIds)) {
      const size = chunk.length;
      await runPrepared(
        db,
        `delivery.updateParts.${size}`,
        (q) =>
          q
            .updateTable('message_parts')
            .set({
              stat: slot(0),
              dlr_status: slot(1) as unknown as number,
              updated_at: slot(2) as unknown as number,
            })
            .where('id', 'in', slots(3, size)),
        [stat, dlrStatus, now, ...chunk],
      );
    }
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
                eb('state', 'in', [slot(3), slot(4)]),
                eb.and([eb('state', '=', slot(5)), eb('error', '=', slot(6))]),
              ]),
            )
            .returning('id'),
        [state, dlrStatus, now, 'submitted', 'sending', 'expired', receiptTimeoutError, ...chunk],
      );
      for (const row of rows) changed.push(row.id);
    }
    return changed;
  },

  partsOf(db: Executor, messageId: number) {
    return db
      .selectFrom('message_parts')
      .select(['part_no', 'stat', 'dlr_status'])
      .where('message_id', '=', messageId)
      .orderBy('part_no')
      .execute();
  },

  /**
   * Records a final state once: a message already final is left as it is, except one closed for want of a
   * receipt (`closeUnreceipted`), which its real receipt replaces. Returns whether it changed.
   */
  async finalize(db: Executor, id: number, state: string, dlrStatus: number, now: number): Promise<boolean> {
    return (await deliveryRepo.finalizeMany(db, [id], state, dlrStatus, now)).length > 0;
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

  async insertOrphan(
    db: Executor,
    receipt: Pick<Selectable<OrphanReceiptsTable>, 'smsc_id' | 'stat' | 'err'>,
    now: number,
  ) {
    await db
      .insertInto('orphan_receipts')
      .values({ ...receipt, received_at: now })
      .execute();
  },

  /** Removes and returns the orphan receipts received since `since` for these SMSC ids. */
  async takeOrphans(db: Executor, smscIds: string[], since: number) {
    const found = [];
    for (const chunk of chunks(smscIds)) {
      const rows = await db
        .selectFrom('orphan_receipts')
        .select(['id', 'smsc_id', 'stat', 'err'])
        .where('smsc_id', 'in', chunk)
        .where('received_at', '>=', since)
        .orderBy('id')
        .execute();
      if (rows.length > 0) {
        await db
          .deleteFrom('orphan_receipts')
          .where(
            'id',
            'in',
            rows.map((r) => r.id),
          )
          .execute();
      }
      found.push(...rows);
    }
    return found;
  },

  /** Recent orphan receipts, oldest first. */
  recentOrphans(db: Executor, since: number, limit: number) {
    return db
      .selectFrom('orphan_receipts')
      .select(['id', 'smsc_id', 'stat', 'err'])
      .where('received_at', '>=', since)
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  async deleteOrphans(db: Executor, ids: number[]): Promise<void> {
    for (const chunk of chunks(ids))
      await db.deleteFrom('orphan_receipts').where('id', 'in', chunk).execute();
  },

  async deleteOrphansBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('orphan_receipts').where('received_at', '<', before).execute();
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
   * Takes the right to answer a HELP from `number` for the account: true when none was answered since
   * `answeredBefore`, and the answer's time is then recorded. One row per account and number, so of two
   * transactions racing for it one inserts or updates and the other waits and finds it taken.
   */
  async claimHelpAnswer(
    db: Executor,
    accountId: number,
    number: string,
    now: number,
    answeredBefore: number,
  ): Promise<boolean> {
    const row = await db
      .insertInto('help_answers')
      .values({ account_id: accountId, number, answered_at: now })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'number'])
          .doUpdateSet({ answered_at: now })
          .where('help_answers.answered_at', '<=', answeredBefore),
      )
      .returning('account_id')
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Forgets HELP answers older than the interval: they no longer hold the next one back. */
  async deleteHelpAnswersBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('help_answers').where('answered_at', '<', before).execute();
  },

  async insertReply(db: Executor, reply: NewReply): Promise<void> {
    await db.insertInto('replies').values(reply).execute();
  },

  /** A page of a campaign's replies of one type, in arrival order. */
  repliesPage(db: Executor, accountId: number, campaignId: number, type: ReplyType, page: Page) {
    return db
      .selectFrom('replies')
      .select(['number', 'text', 'received_at'])
      .where('campaign_id', '=', campaignId)
      .where('type', '=', type)
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /** How many replies of one type each of the campaigns drew. */
  replyCounts(db: Executor, accountId: number, campaignIds: readonly number[], type: ReplyType) {
    return db
      .selectFrom('replies')
      .select('campaign_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', 'in', campaignIds)
      .where('type', '=', type)
      .where('account_id', '=', accountId)
      .groupBy('campaign_id')
      .execute();
  },

  async insertFragment(
    db: Executor,
    fragment: Omit<Selectable<MoFragmentsTable>, 'id' | 'received_at'>,
    now: number,
  ): Promise<void> {
    await db
      .insertInto('mo_fragments')
      .values({ ...fragment, received_at: now })
      .onConflict((oc) => oc.columns(['sender', 'recipient', 'ref', 'seq']).doNothing())
      .execute();
  },

  fragments(db: Executor, sender: string, recipient: string, ref: number) {
    return db
      .selectFrom('mo_fragments')
      .select(['seq', 'total', 'text', 'connector'])
      .where('sender', '=', sender)
      .where('recipient', '=', recipient)
      .where('ref', '=', ref)
      .orderBy('seq')
      .execute();
  },

  /** Deletes a reply's parts; the count tells whether this transaction is the one that took them. */
  async deleteFragments(db: Executor, sender: string, recipient: string, ref: number): Promise<number> {
    const result = await db
      .deleteFrom('mo_fragments')
      .where('sender', '=', sender)
      .where('recipient', '=', recipient)
      .where('ref', '=', ref)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Replies whose parts have all arrived. */
  completeFragmentGroups(db: Executor, limit: number) {
    return db
      .selectFrom('mo_fragments')
      .select(['sender', 'recipient', 'ref', 'total'])
      .groupBy(['sender', 'recipient', 'ref', 'total'])
      .having((eb) => eb(eb.fn.countAll(), '>=', eb.ref('total')))
      .limit(limit)
      .execute();
  },

  async deleteFragmentsBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('mo_fragments').where('received_at', '<', before).execute();
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
  ): Promise<number> {
    const result = await db
      .updateTable('messages')
      .set({ state: to, updated_at: now })
      .where('state', '=', from)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /** Which contact each of `numbers` was when the campaign wrote to it (list sends; null for a plain number). */
  contactsOfRecipients(db: Executor, accountId: number, campaignId: number, numbers: readonly string[]) {
    return db
      .selectFrom('messages')
      .select(['recipient', 'contact_id'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('recipient', 'in', numbers)
      .execute();
  },

  /** How many of the campaign's messages have the receipt status `dlrStatus`. */
  async countWithStatus(db: Executor, accountId: number, campaignId: number, dlrStatus: number) {
    const row = await db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', dlrStatus)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** How many replies of one type the campaign drew. */
  async countCampaignReplies(db: Executor, accountId: number, campaignId: number, type: ReplyType) {
    const row = await db
      .selectFrom('replies')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('type', '=', type)
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /**
   * The campaigns of the account that wrote to `number` (through the recipient index), with a message due at
   * or after `dueFrom` when given; at most `limit` of them.
   */
  async campaignsSentTo(
    db: Executor,
    accountId: number,
    number: string,
    dueFrom: number | undefined,
    limit: number,
  ): Promise<number[]> {
    let query = db
      .selectFrom('messages')
      .select('campaign_id')
      .distinct()
      .where('recipient', '=', number)
      .where('account_id', '=', accountId);
    if (dueFrom !== undefined) query = query.where('due_at', '>=', dueFrom);
    const rows = await query.limit(limit).execute();
    return rows.map((r) => Number(r.campaign_id));
  },

  /** How many of the account's messages match the filter (see `messageHistory`). */
  async countMessageHistory(db: Executor, accountId: number, filter: MessageFilter): Promise<number> {
    const row = await messageHistory(db, accountId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the account's messages matching the filter, in the order asked (then by id). */
  messageHistoryPage(db: Executor, accountId: number, filter: MessageFilter, sort: MessageSort, page: Page) {
    return orderMessages(messageHistory(db, accountId, filter), sort)
      .select(historyColumns)
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /** The ids and recipients of the first `limit` messages matching the filter, in the order asked. */
  messageHistoryKeys(
    db: Executor,
    accountId: number,
    filter: MessageFilter,
    sort: MessageSort,
    limit: number,
  ) {
    return orderMessages(messageHistory(db, accountId, filter), sort)
      .select(['id', 'recipient'])
      .limit(limit)
      .execute();
  },

  /** The account's messages with these ids (at most a page of them), in no particular order. */
  messagesByIds(db: Executor, accountId: number, ids: readonly number[]) {
    return db
      .selectFrom('messages')
      .select(historyColumns)
      .where('id', 'in', ids)
      .where('account_id', '=', accountId)
      .execute();
  },

  /** How many replies the account received in the period. */
  async countReplyHistory(db: Executor, accountId: number, period: Period): Promise<number> {
    const row = await replyHistory(db, accountId, period)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the replies the account received in the period, in the order asked (then by id). */
  replyHistoryPage(db: Executor, accountId: number, period: Period, sort: ReplySort, page: Page) {
    const direction = sort.descending ? 'desc' : 'asc';
    const key = { id: 'id', date: 'received_at', text: 'text' } as const;
    let query = replyHistory(db, accountId, period).select([
      'id',
      'campaign_id',
      'number',
      'text',
      'received_at',
    ]);
    if (sort.key !== 'id') query = query.orderBy(key[sort.key], direction);
    return query.orderBy('id', direction).limit(page.length).offset(page.start).execute();
  },

  /**
   * The parts (credits) of the accounts' messages sent within the period, summed per account and country, in
   * grouped statements of at most `maxGroupedAccounts` accounts: read from the partial index of sent messages
   * (`messages_sent`, migration 017) alone, never a message row. `countries` keeps only those countries (null:
   * numbers of no country).
   */
  async sentParts(
    db: Executor,
    accountIds: readonly number[],
    period: Period,
    countries: readonly (string | null)[] | undefined,
  ): Promise<{ account_id: number; country: string | null; parts: number }[]> {
    const out: { account_id: number; country: string | null; parts: number }[] = [];
    for (const chunk of chunks([...accountIds], maxGroupedAccounts)) {
      let query = db
        .selectFrom('messages')
        .select(['account_id', 'country'])
        .select((eb) => eb.fn.sum<number>('parts').as('parts'))
        .where('account_id', 'in', chunk)
        // Repeats the index's predicate, which the bounds below imply anyway.
        .where('sent_at', 'is not', null)
        .where('sent_at', '>=', period.from)
        .where('sent_at', '<=', period.to);
      if (countries !== undefined) {
        const codes = countries.filter((c) => c !== null);
        const none = codes.length < countries.length;
        query = query.where((eb) =>
          eb.or([
            ...(codes.length > 0 ? [eb('country', 'in', codes)] : []),
            ...(none ? [eb('country', 'is', null)] : []),
          ]),
        );
      }
      const rows = await query.groupBy(['account_id', 'country']).execute();
      for (const row of rows)
        out.push({ account_id: Number(row.account_id), country: row.country, parts: Number(row.parts) });
    }
    return out;
  },
};

/** Accounts summed by one statement of `sentParts`. */
const maxGroupedAccounts = 500;

/** A period, both ends included, in ms. */
export interface Period {
  from: number;
  to: number;
}

/** What GET /messages filters on; every field but the period is optional. */
export interface MessageFilter extends Period {
  /** The recipient, normalized. */
  destination?: string;
  /** Held in the text, compared without case for ASCII letters. */
  text?: string;
  /** The reported DLR code (see `reportedStatus`). */
  status?: number;
  /** The recipient begins with these digits (a country's calling code). */
  prefix?: string;
}

export interface MessageSort {
  key: 'id' | 'date' | 'destination' | 'status';
  descending: boolean;
}

export interface ReplySort {
  key: 'id' | 'date' | 'text';
  descending: boolean;
}

const historyColumns = [
  'id',
  'campaign_id',
  'recipient',
  'gsmsmsid',
  'text',
  'parts',
  'state',
  'dlr_status',
  'due_at',
  'updated_at',
  'connector',
  'route',
] as const;

/**
 * The history reads find the account's rows through the indexes keyed on `account_id + 0` (migration 013):
 * the expression is what selects them, so no other query's plan ever takes them.
 */
const accountKey = sql<number>`${sql.ref('account_id')} + 0`;

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

/** States a worker may still act on: retention never deletes such a message. */
const unfinishedStates = ['queued', 'sending', 'held'];

async function deleteMessages(db: Executor, rows: readonly { id: number }[]): Promise<number> {
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.id);
  await db.deleteFrom('message_parts').where('message_id', 'in', ids).execute();
  await db.deleteFrom('messages').where('id', 'in', ids).execute();
  return ids.length;
}

/**
 * The DLR code a message reports: its receipt's, 0 for a cancelled message (never sent), else 1 (sent, no
 * receipt yet: queued, held, being sent or submitted).
 */
export const reportedStatus = (state: string, dlrStatus: number | null): number =>
  state === 'cancelled' ? DlrStatus.notSent : (dlrStatus ?? DlrStatus.sent);

const reportedStatusSql = sql<number>`case when ${sql.ref('state')} = 'cancelled' then ${sql.lit(DlrStatus.notSent)} else coalesce(${sql.ref('dlr_status')}, ${sql.lit(DlrStatus.sent)}) end`;

/** The account's messages due within the period that match the filter. */
function messageHistory(db: Executor, accountId: number, filter: MessageFilter) {
  let query = db
    .selectFrom('messages')
    .where(accountKey, '=', accountId)
    .where('due_at', '>=', filter.from)
    .where('due_at', '<=', filter.to);
  if (filter.destination !== undefined) query = query.where('recipient', '=', filter.destination);
  if (filter.prefix !== undefined) query = query.where('recipient', 'like', `${filter.prefix}%`);
  if (filter.text !== undefined) query = query.where(contains(['text'], filter.text));
  if (filter.status !== undefined) query = query.where(reportedStatusSql, '=', filter.status);
  return query;
}

function orderMessages<Q extends ReturnType<typeof messageHistory>>(query: Q, sort: MessageSort): Q {
  const direction = sort.descending ? 'desc' : 'asc';
  const q =
    sort.key === 'date'
      ? query.orderBy('due_at', direction)
      : sort.key === 'destination'
        ? query.orderBy('recipient', direction)
        : sort.key === 'status'
          ? query.orderBy(reportedStatusSql, direction)
          : query;
  return q.orderBy('id', direction) as Q;
}

/** The replies the account received within the period. */
function replyHistory(db: Executor, accountId: number, period: Period) {
  return db
    .selectFrom('replies')
    .where(accountKey, '=', accountId)
    .where('received_at', '>=', period.from)
    .where('received_at', '<=', period.to);
}
