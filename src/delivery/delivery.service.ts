// The outbound state machine: queuing a campaign's messages, claiming due ones by lease, what a submit's outcome
// or a receipt does to messages, parts, lists and the event outbox, orphan receipts, receipts that never come,
// holding and cancelling. Every change is written with the event that reports it, in one transaction.
// What a queued message is (queued-messages.ts) and the outbox's append (outbox-append.ts) live beside it.

import { dlrPayload } from '../events/event-bodies.ts';
import type { Clock } from '../shared/clock.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { countryOf } from '../sms/numbers.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { createLeaseHolder } from '../store/lease-holder.ts';
import type { NewEvent } from '../store/outbox.ts';
import { messagePartsRepo, type OpenPart } from './message-parts.repo.ts';
import { type ClaimedMessage, messagesRepo } from './messages.repo.ts';
import { appendEventsTelling, type EventsWritten } from './outbox-append.ts';
import { messageRows, type NewMessage, type QueuedCampaign } from './queued-messages.ts';
import { dlrStatusOf, isFinalStat, smscIdForms } from './receipt.ts';
import type { Receipt } from './transport.ts';

/** The lists a delivery outcome can put a number on (owned by the campaigns capability). */
export interface NumberLists {
  /** `campaignId`: the campaign the STOP reply answered, recorded on the blacklist entry. */
  addToBlacklist(tx: Executor, accountId: number, number: string, campaignId: number): Promise<void>;
  /** A START reply: the number leaves the account's blacklist (nothing when it was not on it). */
  removeFromBlacklist(tx: Executor, accountId: number, number: string): Promise<void>;
  /** `campaignId`: the campaign whose message the receipt or refusal was about. */
  addToNpai(tx: Executor, accountId: number, number: string, campaignId: number): Promise<void>;
}

/** What the worker needs of a campaign besides its messages (campaigns are the campaigns capability's). */
export interface CampaignSettings {
  sendingOptions(campaignIds: readonly number[]): Promise<Map<number, SendingOptions>>;
  /**
   * Messages no route took when they were sent (the routes changed since the send counted them): inside the
   * transaction that records their failure, their campaign counts them in `not_allowed` and the account that
   * paid gets their cost back, as the send would have done had it known.
   */
  notRouted(tx: Executor, messages: readonly NotRoutedMessage[]): Promise<void>;
}

/** A message that failed for want of a route, as its campaign's counters and refund need it. */
export interface NotRoutedMessage {
  campaignId: number;
  accountId: number;
  /** What it was charged when it was sent (its stored `credits`; its parts for a message stored before prices). */
  credits: number;
}

export interface SendingOptions {
  sender: string | null;
  pushtype: string;
}

export type SubmitResult =
  | {
      kind: 'submitted';
      message: ClaimedMessage;
      smscIds: string[];
      /** The connector that accepted the first part and the route that chose it (CONNECTORS_FILE names). */
      connector?: string;
      route?: string;
    }
  | {
      kind: 'failed';
      message: ClaimedMessage;
      dlrStatus: number;
      error: string;
      /** No route took the message before any part went out: it is refunded and counted in not_allowed. */
      noRoute?: true;
    }
  | { kind: 'retry'; message: ClaimedMessage; retryAt: number; error: string }
  | { kind: 'expired'; message: ClaimedMessage };

export interface DeliveryOptions {
  timezone: string;
  /** Receipt error codes meaning the number does not exist. */
  npaiErrors: string[];
  /** How long a worker's lease term outlives its last heartbeat (LEASE_SECONDS). */
  leaseMs: number;
  /** How long before its term's end a worker stops submitting what it leased (store/lease-holder.ts). */
  leaseGuardMs: number;
  /** How long a submitted message waits for its receipt before it is closed as expired (DLR_WAIT). */
  dlrWaitMs: number;
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;

/** Where a receipt finds the part it answers, and hears which parts receipts closed. */
interface PartLookup {
  /** `connector`: the one the receipt came in on, when the transport names it. */
  find(smscIds: string[], connector?: string): Promise<OpenPart | undefined>;
  closed(partId: number): void;
}

/**
 * How long a receipt may wait for the record of its submit (normally milliseconds); older orphans are never
 * matched, so an SMSC that reuses ids after a restart cannot pin an old receipt on a new message.
 */
const orphanMatchMs = 2 * 60_000;

const finalStateOf = (dlrStatus: number) =>
  dlrStatus === DlrStatus.delivered ? 'delivered' : dlrStatus === DlrStatus.expired ? 'expired' : 'failed';

export function createDeliveryService(deps: {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  numberLists: Pick<NumberLists, 'addToNpai'>;
  campaigns: CampaignSettings;
  options: DeliveryOptions;
  eventsWritten?: EventsWritten;
}) {
  const { db, clock, options } = deps;
  const appendEvents = appendEventsTelling(deps.eventsWritten);
  const npaiErrors = new Set(options.npaiErrors.map((e) => e.padStart(3, '0')));
  const leases = createLeaseHolder({
    db,
    clock,
    options: { queue: 'messages', leaseMs: options.leaseMs, guardMs: options.leaseGuardMs },
  });

  // Events are dated to the second and a batch of receipts shares one instant: formatted once per second.
  const dates = zonedTime(options.timezone);

  function dlrEvent(
    message: Pick<ClaimedMessage, 'account_id' | 'campaign_id' | 'recipient' | 'gsmsmsid'>,
    status: number,
  ): NewEvent {
    return {
      account_id: message.account_id,
      campaign_id: message.campaign_id,
      type: 'DLR',
      payload: dlrPayload(
        dates.isoSecond(clock.now()),
        status,
        message.recipient,
        message.gsmsmsid,
        message.campaign_id,
        countryOf(message.recipient),
      ),
    };
  }

  /**
   * Finds the open parts of receipts (a batch, or one alone) by one query for all of them. A part a receipt
   * of the batch closes is not found again, so a receipt sent twice in one batch changes nothing the second time.
   */
  async function partLookup(tx: Executor, receipts: readonly Receipt[]): Promise<PartLookup> {
    const forms = [...new Set(receipts.flatMap((r) => smscIdForms(r.smscId)))];
    const bySmscId = new Map<string, OpenPart[]>();
    for (const row of forms.length > 0 ? await messagePartsRepo.findOpenParts(tx, forms) : []) {
      const list = bySmscId.get(row.smsc_id);
      if (list) list.push(row);
      else bySmscId.set(row.smsc_id, [row]);
    }
    const closed = new Set<number>();
    return {
      async find(ids, connector) {
        // The most recent open part under any spelling whose message went out through the receipt's
        // connector: two SMSCs numbering from the same range each close their own message. Only when none
        // did, the most recent under any connector: a receipt may come in on another connector than the one
        // that took the message (after a failover).
        let best: OpenPart | undefined;
        let bestOnConnector: OpenPart | undefined;
        for (const id of ids) {
          for (const part of bySmscId.get(id) ?? []) {
            if (closed.has(part.id)) continue;
            if (!best || part.id > best.id) best = part;
            if (
              connector !== undefined &&
              part.connector === connector &&
              (!bestOnConnector || part.id > bestOnConnector.id)
            )
              bestOnConnector = part;
          }
        }
        return bestOnConnector ?? best;
      },
      closed: (id) => closed.add(id),
    };
  }

  /** Submit outcomes applied in `tx`, their events added to `events`. */
  async function applyResults(tx: Executor, results: SubmitResult[], now: number, events: NewEvent[]) {
    let submitted = results.filter((r) => r.kind === 'submitted');
    if (submitted.length > 0) {
      const marked = await messagesRepo.markSubmitted(
        tx,
        submitted.map((r) => ({
          id: r.message.id,
          smscId: r.smscIds[0],
          country: countryOf(r.message.recipient) ?? null,
          owner: r.message.lease_owner,
          connector: r.connector ?? null,
          route: r.route ?? null,
        })),
        now,
      );
      // A message no longer leased under the term that sent it (its worker stalled past the lease, and it went
      // to another) is the other worker's to record: its parts are not recorded here either.
      if (marked.size < submitted.length) submitted = submitted.filter((r) => marked.has(r.message.id));
      await messagePartsRepo.insertParts(
        tx,
        submitted.flatMap((r) =>
          r.smscIds.map((smscId, i) => ({ message_id: r.message.id, part_no: i + 1, smsc_id: smscId })),
        ),
        now,
      );
      // Receipts that overtook this record were kept aside: apply them now.
      if (await messagePartsRepo.hasOrphans(tx)) {
        const allIds = submitted.flatMap((r) => r.smscIds.flatMap(smscIdForms));
        for (const orphan of await messagePartsRepo.takeOrphans(tx, allIds, now - orphanMatchMs)) {
          const receipt = { smscId: orphan.smsc_id, stat: orphan.stat, err: orphan.err };
          events.push(...((await applyReceipt(tx, receipt, now)) ?? []));
        }
      }
    }
    const notRouted: NotRoutedMessage[] = [];
    for (const r of results) {
      if (r.kind === 'failed' || r.kind === 'expired') {
        const status = r.kind === 'failed' ? r.dlrStatus : DlrStatus.expired;
        const error =
          r.kind === 'failed' ? r.error : 'validity period ended before the message could be sent';
        const changed = await messagesRepo.setLeasedState(
          tx,
          [r.message.id],
          { state: finalStateOf(status), dlr_status: status, error },
          now,
          r.message.lease_owner,
        );
        // Refunded once: only by the record that closed the message (not by a worker that lost its lease).
        if (r.kind === 'failed' && r.noRoute && changed > 0) {
          const { campaign_id, account_id, parts, credits } = r.message;
          notRouted.push({
            campaignId: campaign_id,
            accountId: account_id,
            credits: Number(credits ?? parts),
          });
        }
        events.push(dlrEvent(r.message, status));
        if (status === DlrStatus.invalidDestination) {
          await deps.numberLists.addToNpai(
            tx,
            r.message.account_id,
            r.message.recipient,
            r.message.campaign_id,
          );
        }
      } else if (r.kind === 'retry') {
        await messagesRepo.setLeasedState(
          tx,
          [r.message.id],
          { state: 'queued', due_at: r.retryAt, error: r.error },
          now,
          r.message.lease_owner,
        );
      }
    }
    if (notRouted.length > 0) await deps.campaigns.notRouted(tx, notRouted);
  }

  /**
   * Receipts applied in `tx` (unknown ids kept as orphans), their events added to `events` in receipt order.
   * The final receipts of one-part messages, the common case, are written set-wise: one UPDATE of their parts
   * and one of their messages per stat and status; a long message's parts go one receipt at a time.
   */
  async function applyReceipts(tx: Executor, receipts: Receipt[], now: number, events: NewEvent[]) {
    if (receipts.length === 0) return;
    const parts = await partLookup(tx, receipts);
    const applied: (NewEvent[] | { part: OpenPart; status: number })[] = [];
    const groups = new Map<string, { stat: string; status: number; parts: OpenPart[] }>();
    for (const receipt of receipts) {
      const part = isFinalStat(receipt.stat)
        ? await parts.find(smscIdForms(receipt.smscId), receipt.connector)
        : undefined;
      if (!part || part.parts > 1) {
        applied.push((await applyReceipt(tx, receipt, now, true, parts)) ?? []);
        continue;
      }
      parts.closed(part.id);
      const status = dlrStatusOf(receipt, npaiErrors);
      const key = `${receipt.stat}\u0000${status}`;
      const group = groups.get(key) ?? { stat: receipt.stat, status, parts: [] };
      group.parts.push(part);
      groups.set(key, group);
      applied.push({ part, status });
    }
    const finalized = new Set<number>();
    for (const group of groups.values()) {
      await messagePartsRepo.updateParts(
        tx,
        group.parts.map((p) => p.id),
        group.stat,
        group.status,
        now,
      );
      const messageIds = group.parts.map((p) => p.message_id);
      const state = finalStateOf(group.status);
      for (const id of await messagesRepo.finalizeMany(tx, messageIds, state, group.status, now)) {
        finalized.add(Number(id));
      }
    }
    for (const entry of applied) {
      if (Array.isArray(entry)) {
        events.push(...entry);
        continue;
      }
      const { part, status } = entry;
      if (!finalized.has(Number(part.message_id))) continue;
      if (status === DlrStatus.invalidDestination) {
        await deps.numberLists.addToNpai(tx, part.account_id, part.recipient, part.campaign_id);
      }
      events.push(dlrEvent(part, status));
    }
  }

  /**
   * Records submit outcomes, then receipts, with their events, in one transaction: a receipt that came right
   * behind its submit_sm_resp finds its part written just before it, not kept aside as an orphan.
   */
  async function recordOutcomes(results: SubmitResult[], receipts: Receipt[]): Promise<void> {
    const now = clock.now();
    await db.transaction().execute(async (tx) => {
      const events: NewEvent[] = [];
      await applyResults(tx, results, now, events);
      await applyReceipts(tx, receipts, now, events);
      if (events.length > 0) await appendEvents(tx, events, now);
    });
  }

  /**
   * Applies one receipt inside a transaction; returns the events it produced. A receipt with no part awaiting
   * it is kept as an orphan: it may have overtaken the record of its submit (matched when that lands), or be a
   * duplicate, or be for an id the SMSC reuses (only recent orphans are ever matched, so it fades away).
   */
  async function applyReceipt(
    tx: Executor,
    receipt: Receipt,
    now: number,
    keepOrphan = true,
    lookup?: PartLookup,
  ): Promise<NewEvent[] | undefined> {
    const parts = lookup ?? (await partLookup(tx, [receipt]));
    const part = await parts.find(smscIdForms(receipt.smscId), receipt.connector);
    if (!part) {
      if (!keepOrphan) return undefined;
      if (isFinalStat(receipt.stat)) {
        await messagePartsRepo.insertOrphan(
          tx,
          { smsc_id: receipt.smscId, stat: receipt.stat, err: receipt.err },
          now,
        );
      }
      return [];
    }
    if (!isFinalStat(receipt.stat)) return [];
    const status = dlrStatusOf(receipt, npaiErrors);
    await messagePartsRepo.updatePart(tx, part.id, receipt.stat, status, now);
    parts.closed(part.id);
    const message = { ...part, id: part.message_id };
    let finalStatus = status;
    if (part.parts > 1) {
      // A long message is delivered when every part is; otherwise it takes the first part's failure.
      const parts = await messagePartsRepo.partsOf(tx, part.message_id);
      if (parts.length < part.parts || parts.some((p) => p.dlr_status === null)) return [];
      const failed = parts.find((p) => p.dlr_status !== DlrStatus.delivered);
      finalStatus = failed ? failed.dlr_status! : DlrStatus.delivered;
    }
    if (!(await messagesRepo.finalize(tx, message.id, finalStateOf(finalStatus), finalStatus, now)))
      return [];
    if (finalStatus === DlrStatus.invalidDestination) {
      await deps.numberLists.addToNpai(tx, message.account_id, message.recipient, message.campaign_id);
    }
    return [dlrEvent(message, finalStatus)];
  }

  return {
    /**
     * Queues a campaign's messages inside the caller's transaction (the send's), due at `dueAt`: one compiled
     * multi-row INSERT per 1,000 messages.
     */
    async enqueue(tx: Executor, campaign: QueuedCampaign, messages: readonly NewMessage[]): Promise<void> {
      await messagesRepo.insertMessages(tx, messageRows(campaign, messages, clock.now()));
    },

    /** The messages of several campaigns written together (a group of small sends), in as few statements. */
    async enqueueMany(
      tx: Executor,
      campaigns: readonly { campaign: QueuedCampaign; messages: readonly NewMessage[] }[],
    ): Promise<void> {
      const now = clock.now();
      await messagesRepo.insertMessages(
        tx,
        campaigns.flatMap((c) => messageRows(c.campaign, c.messages, now)),
      );
    },

    /**
     * Cancels, inside the caller's transaction (the campaign's cancel), the campaign's messages no worker has
     * ever taken: queued and never attempted. Returns how many; the caller decides what fewer means.
     */
    cancelUntaken(tx: Executor, accountId: number, campaignId: number): Promise<number> {
      return messagesRepo.cancelUntaken(tx, accountId, campaignId, clock.now());
    },

    /**
     * Up to `limit` campaigns of the account with a message to `recipient` (normalized) no worker has taken
     * yet: an SMPP cancel_sm of every message from a source to a destination.
     */
    untakenCampaignsTo(accountId: number, recipient: string, limit: number): Promise<number[]> {
      return messagesRepo.untakenCampaignsTo(db, accountId, recipient, limit);
    },

    /**
     * Where a campaign's first `limit` messages stand, in order: state, receipt status, last change (an SMPP
     * submit's campaign has one message, a submit_multi's up to 255).
     */
    messageStatesOf(campaignId: number, limit: number) {
      return messagesRepo.statesOfCampaign(db, campaignId, limit);
    },

    /** Messages due now and not yet taken by a worker, counted up to `upTo`. */
    dueBacklog(upTo: number): Promise<number> {
      return messagesRepo.countDue(db, clock.now(), upTo);
    },

    /**
     * Every account's messages by state, for the operator's metrics: the queue (queued later, due now,
     * sending, submitted, held) whole, and the final states among the messages due since `finishedSince`.
     */
    async queueStates(now: number, finishedSince: number) {
      const counts = {
        queued: 0,
        due: 0,
        sending: 0,
        submitted: 0,
        held: 0,
        delivered: 0,
        failed: 0,
        expired: 0,
      };
      for (const row of await messagesRepo.queueStates(db, now, finishedSince)) {
        const n = Number(row.n);
        if (row.state === 'queued') {
          counts.due += Number(row.due);
          counts.queued += n - Number(row.due);
        } else if (row.state in counts) counts[row.state as keyof typeof counts] += n;
      }
      return counts;
    },

    /**
     * Leases up to `limit` due messages under this process's lease term (`leases`). One statement, yet in a
     * transaction on purpose: alone it commits before its rows travel back, and a connection cut meanwhile (a
     * PostgreSQL restart) leaves them leased under a term that lives on, never sent. In a transaction the rows
     * come back first and only the COMMIT's answer can be lost; if it is, the claim fails and `leasing` retires
     * the term, so those rows come back one lease later.
     */
    async claim(limit: number): Promise<ClaimedMessage[]> {
      return leases.leasing((owner) => {
        const now = clock.now();
        return db
          .transaction()
          .execute((tx) => messagesRepo.claimDue(tx, deps.dialect, now, options.leaseMs, limit, owner));
      });
    },

    /**
     * This process's hold on the messages it leased: the worker starts its heartbeat, and submits a message
     * only while `leases.holds(message.lease_owner)`.
     */
    leases,

    async releaseExpiredLeases(): Promise<number> {
      return messagesRepo.releaseExpiredLeases(db, clock.now());
    },

    /**
     * Closes up to `limit` messages submitted more than DLR_WAIT ago whose receipt never came: `expired`
     * (DLR 12, what a carrier reports for a message whose validity ran out unconfirmed), each with its DLR
     * event in the same transaction, so their campaigns can finish. Their parts stay open: a receipt that
     * comes later still finds its part, replaces the state and writes a DLR event with the real status.
     * Returns how many were closed.
     */
    async closeUnreceipted(limit = 1000): Promise<number> {
      const now = clock.now();
      const sentBy = now - options.dlrWaitMs;
      // Mostly there is none: a read, and no write transaction, every sweep.
      if (!(await messagesRepo.anyUnreceipted(db, sentBy))) return 0;
      return db.transaction().execute(async (tx) => {
        const closed = await messagesRepo.closeUnreceipted(tx, deps.dialect, sentBy, now, limit);
        await appendEvents(
          tx,
          closed.map((message) => dlrEvent(message, DlrStatus.expired)),
          now,
        );
        return closed.length;
      });
    },

    /** Sender and pushtype of each campaign: what the worker needs besides the message itself. */
    campaigns(campaignIds: readonly number[]): Promise<Map<number, SendingOptions>> {
      return deps.campaigns.sendingOptions(campaignIds);
    },

    recordOutcomes,

    /**
     * Applies orphan receipts whose part is now recorded. Needed where transactions run side by side
     * (PostgreSQL, several workers): a receipt and the record of its submit can each miss the other.
     * Orphans too old to match are dropped. Returns how many receipts were applied.
     */
    async adoptOrphans(): Promise<number> {
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const events: NewEvent[] = [];
        const adopted: number[] = [];
        for (const o of await messagePartsRepo.recentOrphans(tx, now - orphanMatchMs, 1000)) {
          const applied = await applyReceipt(tx, { smscId: o.smsc_id, stat: o.stat, err: o.err }, now, false);
          if (applied === undefined) continue;
          adopted.push(o.id);
          events.push(...applied);
        }
        await messagePartsRepo.deleteOrphans(tx, adopted);
        await messagePartsRepo.deleteOrphansBefore(tx, now - orphanMatchMs);
        if (events.length > 0) await appendEvents(tx, events, now);
        return adopted.length;
      });
    },

    /** Records a batch of receipts in one transaction; unknown ids wait as orphans, duplicates change nothing. */
    recordReceipts: (receipts: Receipt[]) => recordOutcomes([], receipts),

    /**
     * The numbers of the campaign's messages whose receipt said the number does not exist, in seq order, a
     * page at a time (keyset), read in the caller's transaction (lists' NPAI blacklisting): never the whole
     * campaign in memory.
     */
    async *npaiNumbers(tx: Executor, accountId: number, campaignId: number, pageSize = 1000) {
      for (let after = -1; ; ) {
        const page = await messagesRepo.withStatusAfter(
          tx,
          accountId,
          campaignId,
          DlrStatus.invalidDestination,
          after,
          pageSize,
        );
        if (page.length > 0) yield page.map((m) => m.recipient);
        if (page.length < pageSize) return;
        after = Number(page[page.length - 1].seq);
      }
    },

    /**
     * Holds, inside the caller's transaction (a sub-account's lock), the account's queued messages: `held`
     * until `releaseHeld`, never claimed meanwhile. Messages a worker has already taken finish normally.
     * Returns how many were held.
     */
    holdQueued(tx: Executor, accountId: number): Promise<number> {
      return messagesRepo.moveAccountMessages(tx, accountId, 'queued', 'held', clock.now());
    },

    /**
     * Queues the account's held messages again, due when they were (the unlock's transaction), but those of
     * `heldCampaigns` (held for moderation: the operator releases them); how many.
     */
    releaseHeld(tx: Executor, accountId: number, heldCampaigns: readonly number[] = []): Promise<number> {
      return messagesRepo.moveAccountMessages(tx, accountId, 'held', 'queued', clock.now(), heldCampaigns);
    },

    /**
     * A campaign held for moderation, decided (the operator's transaction): its held messages queued, due when
     * they were (approved), or cancelled, never sent (refused). How many moved.
     */
    releaseCampaign(tx: Executor, campaignId: number, approved: boolean): Promise<number> {
      return messagesRepo.moveHeldCampaign(tx, campaignId, approved ? 'queued' : 'cancelled', clock.now());
    },

    /**
     * A paced account's queued messages already due (released at once, in the caller's transaction: an unlock,
     * an approval), spread over its pace: their parts booked by `book` (answers where their slots start), each
     * message due when the parts before it have had theirs. How many moved.
     */
    async paceDue(
      tx: Executor,
      accountId: number,
      partsPerSecond: number,
      book: (parts: number, now: number) => Promise<number>,
    ): Promise<number> {
      const now = clock.now();
      const parts = await messagesRepo.dueParts(tx, accountId, now);
      if (parts === 0) return 0;
      const start = await book(parts, now);
      return messagesRepo.spreadDue(tx, accountId, now, start, partsPerSecond);
    },
  };
}
