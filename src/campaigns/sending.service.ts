// Sending: validate the message, filter the recipients, substitute links, price, debit, and store the
// campaign with its messages and links in one transaction. Simulation runs the same computation unstored.
// A free system message (a balance alert SMS, a HELP's answer) is queued here too, in its caller's transaction.
import type { CreditsService } from '../accounts/credits.service.ts';
import type { Config } from '../config.ts';
import type { DeliveryService } from '../delivery/delivery.service.ts';
import type { NewMessage } from '../delivery/queued-messages.ts';
import { moderationPayload } from '../events/event-bodies.ts';
import type { IdempotencyService, RecordAnswer } from '../idempotency/idempotency.service.ts';
import type { LimitsService, SendLimits } from '../limits/limits.service.ts';
import type { LinksService, NewLink } from '../links/links.service.ts';
import type { PriceTable } from '../prices/price-table.ts';
import type { Actor, AuditEntry, AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { countSegments } from '../sms/segments.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { appendEvents } from '../store/outbox.ts';
import { campaignsRepo, filterChunk, filtersRepo, type NewCampaign } from './campaigns.repo.ts';
import type { CampaignResultView } from './campaigns.schemas.ts';
import { createListedLookups, type ListedLookup } from './listed-lookups.ts';
import { listsRepo } from './lists.repo.ts';
import { createMessageCaps, type Quotas } from './message-caps.ts';
import { type ContactFields, compileTemplate, render } from './message-text.ts';
import {
  type Candidate,
  type FilterCounts,
  type FilterReason,
  filterRecipients,
} from './recipient-filter.ts';
import { checkGsmsmsids, type ListRef, type RecipientInput, refuseGsmsmsid } from './recipient-ids.ts';
import { createBacklogGate } from './send-backlog.ts';
import { createSendBatcher } from './send-batcher.ts';
import { pacedOffsets } from './send-pacing.ts';
import { createSendPlanner, type MessageInput, type Plan } from './send-plan.ts';

/** What a send answers (its route's schema): the ticket (none for a simulation), cost, balance and counts. */
export type CampaignResult = CampaignResultView;

export interface SendOptions {
  simulate: boolean;
  /**
   * The request's `Idempotency-Key` header (undefined when it has none) and its route (`POST /send`): a real
   * send with a key runs once per account and key, and its retries get its first answer.
   */
  idempotency?: { key: unknown; route: string };
  /** Stores the answer under its key, inside the send's transaction (given by the idempotency service). */
  record?: RecordAnswer<CampaignResult>;
  /** When the send is due, as an instant (an SMPP submit's schedule_delivery_time); a past one is now. */
  dueAt?: number;
  /** Told of each recipient the filter did not keep, as given, and why (an SMPP submit_multi's answer). */
  rejected?: (raw: string, reason: FilterReason) => void;
}

interface Recipient {
  gsmsmsid: string | null;
  contact: (ContactFields & { id: number }) | null;
}

/** A send ready to be written together with others (on PostgreSQL): its rows, made when they are written. */
interface SmallSend {
  campaign: NewCampaign;
  now: number;
  quotas: Quotas;
  cost: number;
  counts: FilterCounts;
  listIds: readonly number[];
  recipients: number;
  messagesOf(start: number, end: number): NewMessage[];
  linksOf(campaignId: number, start: number, end: number): NewLink[];
  /** Who sends, for its audit entry. */
  actor: Actor;
  /** Told when the group's debits crossed a balance-alert trigger, for the nudge after the commit. */
  alerted(): void;
}

/** A send's `campaign.send` audit entry. */
const sendEntry = (accountId: number, ticket: string | null, actor: Actor): AuditEntry => ({
  accountId,
  action: 'campaign.send',
  objectType: 'campaign',
  objectId: ticket,
  actor,
});

/** Sends of at most this many kept recipients may be written together; larger ones are alone anyway. */
const smallSendRecipients = 100;

/** Rows handed to one repository call: bounds the row arrays alive at once on 100k sends. */
const writeChunk = 10_000;
const contactPage = 5000;

export type SendingService = ReturnType<typeof createSendingService>;

export function createSendingService(deps: {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  config: Pick<
    Config,
    'MAX_RECIPIENTS' | 'TIMEZONE' | 'STOP_MENTION' | 'MARKETING_WINDOW' | 'MAX_QUEUED_MESSAGES' | 'MAX_PARTS'
  >;
  credits: Pick<CreditsService, 'debit' | 'payable' | 'billedAccounts' | 'debitMany'>;
  links: Pick<LinksService, 'allocate' | 'store'>;
  delivery: Pick<DeliveryService, 'enqueue' | 'enqueueMany' | 'dueBacklog'>;
  /**
   * Told when sends arriving together could not be written together because a statement failed (they are then
   * written one by one): logged, since every group then costs twice.
   */
  failedTogether?: (error: unknown) => void;
  /** Told after a send's commit, with how many messages it queued (a nudge to the delivery worker). */
  queued?: (messages: number) => void;
  /** Told after the commit of a send whose debit crossed the balance-alert trigger (a nudge to the alert worker). */
  alerted?: () => void;
  idempotency: Pick<IdempotencyService, 'once'>;
  /** The price table of the sending account (prices' `tableFor`, from memory on most sends). */
  prices: { tableFor(accountId: number): Promise<PriceTable> };
  /**
   * The sending account's limits (the limits room's `forSend`, from memory on most sends): its daily and monthly
   * quotas, its countries, the pace of its parts; and `pace`, which books a paced send's parts in its transaction.
   */
  limits: Pick<LimitsService, 'forSend' | 'pace'>;
  /** The audit log: a send's `campaign.send` entry, in the send's transaction (with the group's, together). */
  audit: AuditTrail;
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
  /**
   * A send's screening, once per campaign (wired in deps.ts to the moderation service): throws the -7 of a
   * sender not approved or a refusing content rule, or says the campaign is held for moderation and why.
   * Absent: every send passes.
   */
  screen?: (
    account: { accountId: number; parentId: number | null },
    message: { sender: string | null; text: string; links: readonly string[] },
  ) => Promise<{ hold: false } | { hold: true; note: string }>;
  /** Told after the commit of a send held for moderation (its MODERATION event: a nudge to the dispatcher). */
  held?: () => void;
}) {
  const { db, clock, config, credits, links, delivery, audit } = deps;

  const queued = deps.queued ?? (() => {});
  /**
   * On PostgreSQL every statement is a round trip to another process, and a group of small sends written one
   * by one pays one per statement per send: there, a group's small sends are written together, each table's
   * rows in one statement, and the account's row is locked only for the debit at the end. SQLite runs its
   * statements in this process, where one by one costs no round trip and stays the simplest path.
   */
  const writeTogether =
    deps.dialect === 'postgres'
      ? async (tx: Executor, sends: SmallSend[]): Promise<CampaignResult[] | undefined> => {
          const cappable = sends.map((s) => ({
            accountId: s.campaign.account_id,
            now: s.now,
            count: s.recipients,
            quotas: s.quotas,
          }));
          if (!(await messageCaps.takeMany(tx, cappable))) return undefined;
          const billed = await credits.billedAccounts(
            tx,
            sends.map((s) => s.campaign.account_id),
          );
          const ids = await campaignsRepo.reserveIds(tx, sends.length);
          await campaignsRepo.insertWithIds(
            tx,
            sends.map((s, i) => ({
              ...s.campaign,
              id: ids[i],
              billed_account_id: billed.get(s.campaign.account_id)!,
            })),
          );
          for (let i = 0; i < sends.length; i++) {
            await campaignsRepo.insertLists(tx, sends[i].campaign.account_id, ids[i], sends[i].listIds);
          }
          await delivery.enqueueMany(
            tx,
            sends.map((s, i) => ({
              campaign: { id: ids[i], accountId: s.campaign.account_id, dueAt: s.campaign.due_at },
              messages: s.messagesOf(0, s.recipients),
            })),
          );
          const linkRows = sends.flatMap((s, i) => s.linksOf(ids[i], 0, s.recipients));
          if (linkRows.length > 0) await links.store(tx, linkRows);
          await audit.recordMany(
            tx,
            sends.map((s, i) => sendEntry(s.campaign.account_id, idOut(ids[i]), s.actor)),
          );
          // Last: the paying accounts' rows stay locked from here to the commit.
          const debited = await credits.debitMany(
            tx,
            sends.map((s, i) => ({
              billedAccountId: billed.get(s.campaign.account_id)!,
              cost: s.cost,
              campaignId: ids[i],
            })),
          );
          if (debited === undefined) return undefined;
          // Which send crossed matters not: any one of them nudges the alert worker once committed.
          if (debited.alerted) sends[0].alerted();
          return sends.map((s, i) => ({
            ticket: idOut(ids[i]),
            cost: s.cost,
            credits: debited.after[i],
            ...s.counts,
          }));
        }
      : undefined;
  // Each send's `campaign.send` entry is written with its group's, in one statement (send-batcher.ts); sends
  // written together write theirs themselves, before their debit.
  const batcher = createSendBatcher<SmallSend, AuditEntry>(db, {
    writeTogether,
    written: (tx, entries) => audit.recordMany(tx, entries),
    failedTogether: deps.failedTogether,
  });
  const messageCaps = createMessageCaps({ timezone: config.TIMEZONE });

  const refuseWhenBacklogged = createBacklogGate(config, delivery);
  const listed: ListedLookup =
    deps.dialect === 'postgres'
      ? createListedLookups(db)
      : (accountId, numbers) => filtersRepo.listed(db, accountId, numbers);
  const { plan, tooManyParts, checkRecipientCount } = createSendPlanner(config);
  const dates = zonedTime(config.TIMEZONE);

  /** What held the send's campaign for moderation (a content rule), or undefined: it goes out as usual. */
  async function screened(auth: AuthContext, p: Plan): Promise<string | undefined> {
    if (!deps.screen) return undefined;
    const decision = await deps.screen(auth, { sender: p.sender, text: p.text, links: p.links });
    return decision.hold ? decision.note : undefined;
  }

  /** Sorts a send's recipients into kept and filtered: its countries, routes, blacklist and NPAI list. */
  const filterFor = <T>(
    accountId: number,
    candidates: Iterable<Candidate<T>>,
    p: Pick<Plan, 'sender' | 'pushtype'>,
    limits: SendLimits,
    rejected?: (raw: string, reason: FilterReason) => void,
  ) =>
    filterRecipients(candidates, {
      rejected,
      allowedCountries: limits.countries,
      routable: deps.routable
        ? (destination, country) =>
            deps.routable!({ destination, country, sender: p.sender, pushtype: p.pushtype, accountId })
        : undefined,
      lookup: (numbers) => listed(accountId, numbers),
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
    kept: { number: string; country: string | undefined; item: Recipient }[],
    counts: FilterCounts,
    simulate: boolean,
    now: number,
    limits: SendLimits,
    listIds: readonly number[] = [],
    record?: RecordAnswer<CampaignResult>,
    /** What held the campaign for moderation: stored `moderation`, its messages `held`. */
    heldBy?: string,
  ): Promise<CampaignResult> {
    const moderation = heldBy === undefined ? {} : { moderation: 'pending' as const, held_by: heldBy };
    const template = compileTemplate(p.text);
    const linkCount = p.links.length;
    // A simulation prices with one drawn URL per link: every code has the same length and alphabet, so
    // the price is the one the real codes give.
    const codes = linkCount === 0 ? [] : links.allocate((simulate ? 1 : kept.length) * linkCount);
    const urls: string[] = new Array(linkCount);
    const texts: string[] = new Array(kept.length);
    const parts = new Uint16Array(kept.length);
    const ucs2 = new Uint8Array(kept.length);
    // Each recipient is priced once, here: its message stores what it was charged, which refunds and
    // consumption read back rather than price it again.
    const charged = new Float64Array(kept.length);
    const prices = await deps.prices.tableFor(auth.accountId);
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
      const credits = prices.flat
        ? segments.parts
        : segments.parts * prices.priceOf(kept[seq].number, kept[seq].country);
      charged[seq] = credits;
      cost += credits;
    }

    if (simulate) {
      await messageCaps.check(db, auth.accountId, now, kept.length, limits.quotas);
      const balance = await credits.payable(auth.accountId, cost);
      return { cost, credits: balance - cost, ...counts, ...moderation };
    }

    const accountId = auth.accountId;
    // Who sent it, taken here in its request: the group is written outside any one request's context.
    const actor: Actor = audit.actor(auth);
    let alerted = false;
    // A paced account's messages are due one after the other, each when the parts before it have had their slots
    // (send-pacing.ts), from `pacedFrom`: booked in the send's transaction, or the scheduled campaign's due time.
    const paced = limits.partsPerSecond > 0 ? pacedOffsets(parts, limits.partsPerSecond) : undefined;
    let pacedFrom = p.dueAt;
    /** The messages of recipients `start` to `end` (excluded), as delivery queues them. */
    const messagesOf = (start: number, end: number): NewMessage[] => {
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
          credits: charged[seq],
          dueAt: paced ? pacedFrom + paced.offsets[seq] : undefined,
        });
      }
      return messages;
    };
    /** The links of recipients `start` to `end`, each with what its CLICKER events will tell of the recipient. */
    const linksOf = (campaignId: number, start: number, end: number): NewLink[] => {
      const linkRows: NewLink[] = [];
      for (let seq = start; seq < end; seq++) {
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
      return linkRows;
    };
    const campaignRow: NewCampaign = {
      account_id: accountId,
      billed_account_id: accountId,
      sender: p.sender,
      text: p.text,
      pushtype: p.pushtype,
      unicode: p.unicode ? 1 : 0,
      cost,
      ...counts,
      status: heldBy === undefined ? 'scheduled' : 'moderation',
      due_at: p.dueAt,
      created_at: now,
      system: 0,
    };
    // A small send without an Idempotency-Key may be written together with the others of its group.
    // A paced send books its slots alone.
    const together: SmallSend | undefined =
      writeTogether && !record && heldBy === undefined && !paced && kept.length <= smallSendRecipients
        ? {
            campaign: campaignRow,
            now,
            quotas: limits.quotas,
            cost,
            counts,
            listIds,
            messagesOf,
            linksOf,
            recipients: kept.length,
            actor,
            alerted: () => {
              alerted = true;
            },
          }
        : undefined;
    const sent = await batcher.submit(
      async (tx) => {
        // First: a send past the day's or month's quota is refused before anything else is written.
        await messageCaps.take(tx, accountId, now, kept.length, limits.quotas);
        // A campaign due later (or held for moderation) is paced from its due time, and books nothing of the
        // account's pace (its bookings would make the sends of today wait for it).
        if (paced && p.dueAt <= now && heldBy === undefined)
          pacedFrom = await deps.limits.pace(tx, accountId, limits.partsPerSecond, paced.parts, now);
        const campaignId = await campaignsRepo.insert(tx, campaignRow);
        const debited = await credits.debit(tx, accountId, cost, campaignId);
        alerted = debited.alerted;
        if (debited.billedAccountId !== accountId) {
          await campaignsRepo.setBilledAccount(tx, accountId, campaignId, debited.billedAccountId);
        }
        // The lists a list send used, for its reads (`lists:[{id}]`).
        await campaignsRepo.insertLists(tx, accountId, campaignId, listIds);
        if (heldBy !== undefined) {
          await campaignsRepo.setModerationNote(tx, campaignId, heldBy);
          const payload = moderationPayload(campaignId, 'pending', heldBy, dates.wallTime(now));
          await appendEvents(
            tx,
            [{ account_id: accountId, campaign_id: campaignId, type: 'MODERATION', payload }],
            now,
          );
        }
        const campaign = { id: campaignId, accountId, dueAt: p.dueAt, held: heldBy !== undefined };
        for (let start = 0; start < kept.length; start += writeChunk) {
          const end = Math.min(kept.length, start + writeChunk);
          await delivery.enqueue(tx, campaign, messagesOf(start, end));
          if (linkCount > 0) await links.store(tx, linksOf(campaignId, start, end));
        }
        const result: CampaignResult = {
          ticket: idOut(campaignId),
          cost,
          credits: debited.credits,
          ...counts,
          ...moderation,
        };
        // The answer under its Idempotency-Key commits with the campaign, or neither does.
        await record?.(tx, result);
        return result;
      },
      together,
      (result) => sendEntry(accountId, result.ticket ?? null, actor),
    );
    // Committed: the delivery worker, maybe in another process, need not wait for its next poll.
    if (heldBy === undefined) queued(kept.length);
    else deps.held?.();
    if (alerted) deps.alerted?.();
    return sent;
  }

  const service = {
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
          (record) =>
            service.send(auth, message, recipients, { simulate: false, record, dueAt: options.dueAt }),
        );
      }
      const now = clock.now();
      const p = plan(message, now, options.dueAt);
      checkRecipientCount(recipients.length, 'sms.recipients.gsm');
      if (!options.simulate) await refuseWhenBacklogged(now);
      checkGsmsmsids(recipients);
      const candidates = function* (): Generator<Candidate<Recipient>> {
        for (const r of recipients) {
          const gsmsmsid = r.gsmsmsid === undefined || r.gsmsmsid === '' ? null : r.gsmsmsid;
          yield { raw: r.value, item: { gsmsmsid, contact: null } };
        }
      };
      const heldBy = await screened(auth, p);
      const limits = await deps.limits.forSend(auth);
      const { kept, counts } = await filterFor(auth.accountId, candidates(), p, limits, options.rejected);
      return execute(auth, p, kept, counts, options.simulate, now, limits, [], options.record, heldBy);
    },

    /** POST /send/lists and its simulation: the recipients are the contacts of the account's lists. */
    async sendLists(
      auth: AuthContext,
      message: MessageInput,
      listRefs: ListRef[],
      options: SendOptions,
    ): Promise<CampaignResult> {
      refuseGsmsmsid(listRefs);
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
      const heldBy = await screened(auth, p);
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
      const limits = await deps.limits.forSend(auth);
      const { kept, counts } = await filterFor(auth.accountId, contacts, p, limits);
      return execute(auth, p, kept, counts, options.simulate, now, limits, ids, options.record, heldBy);
    },

    /**
     * Queues one free message from the service itself (a balance alert SMS) inside the caller's transaction:
     * a campaign of the account costing 0, with no debit, ledger line or recipient filtering, which the
     * delivery worker sends like any other, marked `system` so the account's campaign reads leave it out.
     * Returns the campaign id.
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
        // The operator's message, not the customer's campaign: GET /campaigns leaves it out.
        system: 1,
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
          // Free: the operator's message, charged nothing.
          credits: 0,
        },
      ]);
      return campaignId;
    },
  };
  return service;
}
