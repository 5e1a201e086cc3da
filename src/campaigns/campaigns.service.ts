// Sending: validate the message, filter the recipients, substitute links, price, debit, and store the
// campaign with its messages and links in one transaction. Simulation runs the same computation unstored.
import type { CreditsService } from '../accounts/credits.service.ts';
import type { Config } from '../config.ts';
import type { DeliveryService, NewMessage } from '../delivery/delivery.service.ts';
import type { DeliveryLifecycleService } from '../delivery/delivery-lifecycle.service.ts';
import type { IdempotencyService, RecordAnswer } from '../idempotency/idempotency.service.ts';
import type { LinksService, NewLink } from '../links/links.service.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { parseCountries } from '../sms/numbers.ts';
import { countSegments } from '../sms/segments.ts';
import type { Db, Executor } from '../store/db.ts';
import { campaignsRepo, filterChunk, filtersRepo } from './campaigns.repo.ts';
import { createDailyCap } from './daily-cap.ts';
import { listsRepo } from './lists.repo.ts';
import { type ContactFields, compileTemplate, render } from './message-text.ts';
import { type Candidate, type FilterCounts, filterRecipients } from './recipient-filter.ts';
import { createSendBatcher } from './send-batcher.ts';
import { createSendPlanner, type MessageInput, type Plan } from './send-plan.ts';

export interface RecipientInput {
  value: string;
  gsmsmsid?: string;
}

export interface CampaignResult extends FilterCounts {
  ticket?: string;
  cost: number;
  credits: number;
}

export interface SendOptions {
  simulate: boolean;
  /**
   * The request's `Idempotency-Key` header (undefined when it has none) and its route (`POST /send`): a real
   * send with a key runs once per account and key, and its retries get its first answer.
   */
  idempotency?: { key: unknown; route: string };
  /** Stores the answer under its key, inside the send's transaction (given by the idempotency service). */
  record?: RecordAnswer<CampaignResult>;
}

interface Recipient {
  gsmsmsid: string | null;
  contact: (ContactFields & { id: number }) | null;
}

const maxGsmsmsidLength = 100;
/** How long a read of the send queue's depth serves the sends that follow it. */
const backlogReadMs = 500;
/** What a send refused for a full queue is told to wait. */
const backlogRetryAfterS = 5;
/** Rows handed to one repository call: bounds the row arrays alive at once on 100k sends. */
const writeChunk = 10_000;
const contactPage = 5000;

export type CampaignsService = ReturnType<typeof createCampaignsService>;

export function createCampaignsService(deps: {
  db: Db;
  clock: Clock;
  config: Pick<
    Config,
    | 'MAX_RECIPIENTS'
    | 'TIMEZONE'
    | 'STOP_MENTION'
    | 'ALLOWED_COUNTRIES'
    | 'MARKETING_WINDOW'
    | 'MAX_QUEUED_MESSAGES'
    | 'MAX_PARTS'
    | 'DAILY_MESSAGE_LIMIT'
  >;
  credits: Pick<CreditsService, 'debit' | 'credits' | 'refund'>;
  links: Pick<LinksService, 'allocate' | 'store' | 'purgeCampaign'>;
  delivery: Pick<DeliveryService, 'enqueue' | 'cancelUntaken' | 'dueBacklog'>;
  /** Retention of a campaign's messages: whether any is left to send, and the finished ones purged. */
  deliveryLifecycle: Pick<DeliveryLifecycleService, 'purgeCampaignMessages' | 'hasUnfinished'>;
  /** Told after a send's commit, with how many messages it queued (a nudge to the delivery worker). */
  queued?: (messages: number) => void;
  idempotency: Pick<IdempotencyService, 'once'>;
  /**
   * Whether a delivery route of CONNECTORS_FILE takes a message (wired in deps.ts to the routing table);
   * absent when there is no such file and every message has its route.
   */
  routable?: (message: {
    destination: string;
    country?: string;
    sender: string | null;
    pushtype: string;
    accountId: number;
  }) => boolean;
}) {
  const { db, clock, config, credits, links, delivery, deliveryLifecycle } = deps;
  const queued = deps.queued ?? (() => {});
  const allowedCountries = parseCountries(config.ALLOWED_COUNTRIES);
  const batcher = createSendBatcher(db);
  const dailyCap = createDailyCap({ limit: config.DAILY_MESSAGE_LIMIT, timezone: config.TIMEZONE });

  // The send queue's depth, read at most every `backlogReadMs` and shared by the sends meanwhile.
  let backlog = { depth: 0, readAt: Number.NEGATIVE_INFINITY };

  /**
   * Refuses a send with HTTP 429 while MAX_QUEUED_MESSAGES messages are due and untaken: an overloaded
   * server tells its clients to come back rather than let every receipt wait behind the backlog.
   */
  async function refuseWhenBacklogged(now: number): Promise<void> {
    const limit = config.MAX_QUEUED_MESSAGES;
    if (limit === 0) return;
    if (now - backlog.readAt >= backlogReadMs) {
      backlog = { depth: await delivery.dueBacklog(limit), readAt: now };
    }
    if (backlog.depth >= limit) {
      throw ApiError.tooManyRequests(
        Status.unknown,
        `${backlog.depth} messages are waiting to be sent, the most this server queues (MAX_QUEUED_MESSAGES); retry in ${backlogRetryAfterS} s`,
        backlogRetryAfterS,
      );
    }
  }

  const { plan, tooManyParts, checkRecipientCount } = createSendPlanner(config);

  /** Sorts a send's recipients into kept and filtered, against the account's blacklist and NPAI list. */
  const filterFor = <T>(
    accountId: number,
    candidates: Iterable<Candidate<T>>,
    p: Pick<Plan, 'sender' | 'pushtype'>,
  ) =>
    filterRecipients(candidates, {
      allowedCountries,
      routable: deps.routable
        ? (destination, country) =>
            deps.routable!({ destination, country, sender: p.sender, pushtype: p.pushtype, accountId })
        : undefined,
      lookup: (numbers) => filtersRepo.listed(db, accountId, numbers),
      anyListed: () => filtersRepo.hasAny(db, accountId),
      chunk: filterChunk,
    });

  /**
   * Renders, prices and (unless simulating) stores a filtered campaign. Every kept recipient gets its
   * own short code per link, so a click tells which recipient made it.
   */
  async function execute(
    auth: AuthContext,
    p: Plan,
    kept: { number: string; item: Recipient }[],
    counts: FilterCounts,
    simulate: boolean,
    now: number,
    listIds: readonly number[] = [],
    record?: RecordAnswer<CampaignResult>,
  ): Promise<CampaignResult> {
    const template = compileTemplate(p.text);
    const linkCount = p.links.length;
    // A simulation prices with one drawn URL per link: every code has the same length and alphabet, so
    // the price is the one the real codes give.
    const codes = linkCount === 0 ? [] : links.allocate((simulate ? 1 : kept.length) * linkCount);
    const urls: string[] = new Array(linkCount);
    const texts: string[] = new Array(kept.length);
    const parts = new Uint16Array(kept.length);
    const ucs2 = new Uint8Array(kept.length);
    let cost = 0;
    for (let seq = 0; seq < kept.length; seq++) {
      const base = simulate ? 0 : seq * linkCount;
      for (let k = 0; k < linkCount; k++) urls[k] = codes[base + k].url;
      const text = render(template, urls, kept[seq].item.contact ?? undefined);
      const segments = countSegments(text, p.unicode);
      if (segments.parts > config.MAX_PARTS) {
        throw tooManyParts(
          `the text for ${kept[seq].number}, its links and fields in place,`,
          String(segments.parts),
          segments,
        );
      }
      texts[seq] = text;
      parts[seq] = segments.parts;
      ucs2[seq] = segments.encoding === 'ucs2' ? 1 : 0;
      cost += segments.parts;
    }

    if (simulate) {
      await dailyCap.check(db, auth.accountId, now, kept.length);
      const available = await credits.credits(auth.accountId);
      if (available < cost) {
        throw new ApiError(Status.credits, `this send costs ${cost} credits and ${available} are available`);
      }
      return { cost, credits: available - cost, ...counts };
    }

    const accountId = auth.accountId;
    const sent = await batcher.submit(async (tx) => {
      // First: a send past the day's cap is refused before anything else is written.
      await dailyCap.take(tx, accountId, now, kept.length);
      const campaignId = await campaignsRepo.insert(tx, {
        account_id: accountId,
        billed_account_id: accountId,
        sender: p.sender,
        text: p.text,
        pushtype: p.pushtype,
        unicode: p.unicode ? 1 : 0,
        cost,
        ...counts,
        status: 'scheduled',
        due_at: p.dueAt,
        created_at: now,
      });
      const debited = await credits.debit(tx, accountId, cost, campaignId);
      if (debited.billedAccountId !== accountId) {
        await campaignsRepo.setBilledAccount(tx, accountId, campaignId, debited.billedAccountId);
      }
      // The lists a list send used, for its reads (`lists:[{id}]`).
      await campaignsRepo.insertLists(tx, accountId, campaignId, listIds);
      const campaign = { id: campaignId, accountId, dueAt: p.dueAt };
      for (let start = 0; start < kept.length; start += writeChunk) {
        const end = Math.min(kept.length, start + writeChunk);
        const messages: NewMessage[] = [];
        for (let seq = start; seq < end; seq++) {
          const { number, item } = kept[seq];
          messages.push({
            seq,
            recipient: number,
            gsmsmsid: item.gsmsmsid,
            contactId: item.contact?.id ?? null,
            text: texts[seq],
            parts: parts[seq],
            encoding: ucs2[seq] ? 'ucs2' : 'gsm7',
          });
        }
        await delivery.enqueue(tx, campaign, messages);
        if (linkCount > 0) {
          const linkRows: NewLink[] = [];
          for (let seq = start; seq < end; seq++) {
            // What the link's CLICKER events will tell of the recipient, handed to links with it.
            const { gsmsmsid, contact } = kept[seq].item;
            for (let k = 0; k < linkCount; k++) {
              linkRows.push({
                code: codes[seq * linkCount + k].code,
                campaign_id: campaignId,
                message_seq: seq,
                account_id: accountId,
                long_url: p.links[k],
                gsmsmsid,
                contact,
              });
            }
          }
          await links.store(tx, linkRows);
        }
      }
      const result: CampaignResult = { ticket: idOut(campaignId), cost, credits: debited.credits, ...counts };
      // The answer under its Idempotency-Key commits with the campaign, or neither does.
      await record?.(tx, result);
      return result;
    });
    // Committed: the delivery worker, maybe in another process, need not wait for its next poll.
    queued(kept.length);
    return sent;
  }

  const service = {
    /**
     * Retention: deletes, in one transaction, up to `limit` rows of the account's oldest campaign created
     * before `before` whose messages are all done with: its messages first, then its links, then the campaign.
     * A campaign with a message still queued, being sent or held is left for a later pass. Returns the rows
     * deleted (0: nothing left to delete).
     */
    async purgeCampaigns(accountId: number, before: number, limit: number): Promise<number> {
      for (const campaignId of await campaignsRepo.createdBefore(db, accountId, before, 50)) {
        const deleted = await db.transaction().execute(async (tx) => {
          if (await deliveryLifecycle.hasUnfinished(tx, campaignId)) return 0;
          const messages = await deliveryLifecycle.purgeCampaignMessages(tx, campaignId, limit);
          if (messages > 0) return messages;
          const links = await deps.links.purgeCampaign(tx, campaignId, limit);
          if (links > 0) return links;
          await campaignsRepo.remove(tx, campaignId);
          return 1;
        });
        if (deleted > 0) return deleted;
      }
      return 0;
    },

    /**
     * DELETE /send/:ticket: cancels a campaign none of whose messages a worker has taken, and gives its cost
     * back to the account that paid, with a ledger line, all in one transaction. Answers the balance after.
     */
    async cancel(auth: AuthContext, ticket: string): Promise<{ credits: number }> {
      const id = idIn(ticket);
      return db.transaction().execute(async (tx) => {
        const campaign = id === undefined ? undefined : await campaignsRepo.find(tx, auth.accountId, id);
        if (id === undefined || !campaign) throw ApiError.notFound(`campaign "${ticket}" not found`);
        const alreadyCancelled = () => ApiError.data(`campaign ${id} is already cancelled`);
        if (campaign.status === 'cancelled') throw alreadyCancelled();
        const messages = Number(campaign.sent);
        if (messages === 0) {
          throw ApiError.data(`campaign ${id} has no message to cancel: every recipient was filtered out`);
        }
        // The status first: its row lock makes a concurrent cancel of the same campaign wait, then find it done.
        if (!(await campaignsRepo.markCancelled(tx, auth.accountId, id))) throw alreadyCancelled();
        // A worker may be claiming this campaign's messages right now. Only messages never taken are
        // cancelled; if any is missing, the campaign has started and the whole cancel rolls back.
        const cancelled = await delivery.cancelUntaken(tx, auth.accountId, id);
        if (cancelled !== messages) {
          throw ApiError.data(
            `campaign ${id} cannot be cancelled: ${messages - cancelled} of its ${messages} messages have already been taken for sending`,
          );
        }
        const cost = Number(campaign.cost);
        const billed = Number(campaign.billed_account_id);
        // The refund goes to the account that paid (the parent, for an unlimited sub-account).
        const balance = await credits.refund(tx, billed, cost, id);
        // Its messages were never sent: they no longer count against the day's DAILY_MESSAGE_LIMIT.
        await dailyCap.giveBack(tx, auth.accountId, Number(campaign.created_at), messages);
        return { credits: balance };
      });
    },

    /** POST/GET /send and their simulations. */
    async send(
      auth: AuthContext,
      message: MessageInput,
      recipients: RecipientInput[],
      options: SendOptions,
    ): Promise<CampaignResult> {
      const keyed = options.simulate ? undefined : options.idempotency;
      if (keyed?.key !== undefined) {
        return deps.idempotency.once(
          auth.accountId,
          keyed.key,
          { route: keyed.route, payload: { message, recipients } },
          (record) => service.send(auth, message, recipients, { simulate: false, record }),
        );
      }
      const now = clock.now();
      const p = plan(message, now);
      checkRecipientCount(recipients.length, 'sms.recipients.gsm');
      if (!options.simulate) await refuseWhenBacklogged(now);
      for (const r of recipients) {
        if (r.gsmsmsid !== undefined && r.gsmsmsid.length > maxGsmsmsidLength) {
          throw ApiError.data(
            `sms.recipients.gsm: gsmsmsid "${r.gsmsmsid.slice(0, 20)}…" is longer than ${maxGsmsmsidLength} characters`,
          );
        }
      }
      const candidates = function* (): Generator<Candidate<Recipient>> {
        for (const r of recipients) {
          const gsmsmsid = r.gsmsmsid === undefined || r.gsmsmsid === '' ? null : r.gsmsmsid;
          yield { raw: r.value, item: { gsmsmsid, contact: null } };
        }
      };
      const { kept, counts } = await filterFor(auth.accountId, candidates(), p);
      return execute(auth, p, kept, counts, options.simulate, now, [], options.record);
    },

    /** POST /send/lists and its simulation: the recipients are the contacts of the account's lists. */
    async sendLists(
      auth: AuthContext,
      message: MessageInput,
      listRefs: { value: string }[],
      options: SendOptions,
    ): Promise<CampaignResult> {
      const keyed = options.simulate ? undefined : options.idempotency;
      if (keyed?.key !== undefined) {
        return deps.idempotency.once(
          auth.accountId,
          keyed.key,
          { route: keyed.route, payload: { message, lists: listRefs } },
          (record) => service.sendLists(auth, message, listRefs, { simulate: false, record }),
        );
      }
      const now = clock.now();
      const p = plan(message, now);
      if (listRefs.length === 0)
        throw ApiError.data('sms.lists is missing or empty: give at least one list id as {"value": id}');
      if (!options.simulate) await refuseWhenBacklogged(now);
      const ids: number[] = [];
      for (const ref of listRefs) {
        const id = idIn(String(ref.value).trim());
        if (id === undefined) throw ApiError.notFound(`list "${ref.value}" not found`);
        if (!ids.includes(id)) ids.push(id);
      }
      const existing = await listsRepo.existing(db, auth.accountId, ids);
      const missing = ids.find((id) => !existing.has(id));
      if (missing !== undefined) throw ApiError.notFound(`list ${missing} not found`);
      checkRecipientCount(await listsRepo.countContacts(db, auth.accountId, ids), 'the lists');

      // Contacts are read a page at a time; the send holds at most MAX_RECIPIENTS of them.
      const contacts: Candidate<Recipient>[] = [];
      for (let after = 0; ; ) {
        const page = await listsRepo.contactsAfter(db, auth.accountId, ids, after, contactPage);
        for (const c of page) {
          contacts.push({
            raw: c.number,
            item: {
              gsmsmsid: null,
              contact: { id: Number(c.id), info1: c.info1, info2: c.info2, info3: c.info3, info4: c.info4 },
            },
          });
        }
        if (page.length < contactPage) break;
        after = Number(page[page.length - 1].id);
        if (contacts.length > config.MAX_RECIPIENTS) break;
      }
      checkRecipientCount(contacts.length, 'the lists');
      const { kept, counts } = await filterFor(auth.accountId, contacts, p);
      return execute(auth, p, kept, counts, options.simulate, now, ids, options.record);
    },

    /**
     * Queues one free message from the service itself (a balance alert SMS) inside the caller's transaction:
     * a campaign of the account costing 0, with no debit, ledger line or recipient filtering, which the
     * delivery worker sends like any other. Returns the campaign id.
     */
    async sendSystemMessage(
      tx: Executor,
      accountId: number,
      number: string,
      text: string,
      sender: string,
    ): Promise<number> {
      const now = clock.now();
      const segments = countSegments(text);
      const campaignId = await campaignsRepo.insert(tx, {
        account_id: accountId,
        billed_account_id: accountId,
        sender,
        text,
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
        due_at: now,
        created_at: now,
      });
      await delivery.enqueue(tx, { id: campaignId, accountId, dueAt: now }, [
        {
          seq: 0,
          recipient: number,
          gsmsmsid: null,
          contactId: null,
          text,
          parts: segments.parts,
          encoding: segments.encoding,
        },
      ]);
      return campaignId;
    },

    /** Deletes up to `limit` daily message counts of the days before yesterday; returns how many went. */
    pruneDailyCounts(now: number, limit?: number): Promise<number> {
      return dailyCap.prune(db, now, limit);
    },

    /** Sender and pushtype of each campaign: what the delivery worker needs besides the messages. */
    async sendingOptions(
      ids: readonly number[],
    ): Promise<Map<number, { sender: string | null; pushtype: string }>> {
      const rows = await campaignsRepo.sendingOptions(db, ids);
      return new Map(rows.map((r) => [Number(r.id), { sender: r.sender, pushtype: r.pushtype }]));
    },

    /**
     * Messages the delivery worker found no route for when it sent them (the routes changed after the send
     * counted them), inside the transaction that records their failure: each moves from its campaign's `sent`
     * to `not_allowed`, and its parts (what it cost) go back to the account that paid, with a ledger line, as
     * for a recipient no route took at send time. A free campaign (a HELP answer, an alert SMS) refunds nothing.
     * Campaigns are taken in id order, so concurrent workers lock their rows in the same order.
     */
    async notRouted(
      tx: Executor,
      messages: readonly { campaignId: number; accountId: number; parts: number }[],
    ): Promise<void> {
      const byCampaign = new Map<number, { accountId: number; messages: number; parts: number }>();
      for (const m of messages) {
        const entry = byCampaign.get(m.campaignId) ?? { accountId: m.accountId, messages: 0, parts: 0 };
        entry.messages++;
        entry.parts += m.parts;
        byCampaign.set(m.campaignId, entry);
      }
      for (const id of [...byCampaign.keys()].sort((a, b) => a - b)) {
        const entry = byCampaign.get(id)!;
        const campaign = await campaignsRepo.find(tx, entry.accountId, id);
        if (!campaign) continue;
        const refunded = Math.min(Number(campaign.cost), entry.parts);
        await campaignsRepo.countNotRouted(tx, entry.accountId, id, entry.messages, refunded);
        if (refunded > 0) await credits.refund(tx, Number(campaign.billed_account_id), refunded, id);
      }
    },
  };
  return service;
}
