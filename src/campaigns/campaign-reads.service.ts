// Reading campaigns back in SMSFactor's shapes: one campaign or a filtered page of them with their counters,
// the replies, STOPs and NPAI numbers a campaign drew, and the account's message and reply history over a
// period. Counters come from the campaign's own messages (one grouped query for every campaign of the answer),
// so a read costs what its campaigns hold, never what the whole account holds; the histories are bounded by
// their period. Messages and replies are delivery's rows, asked of the delivery service.
import { getCountries, getCountryCallingCode, isSupportedCountry } from 'libphonenumber-js/max';
import type { Config } from '../config.ts';
import type {
  HistoryMessage,
  MessageFilter,
  MessageReadsService,
  MessageSort,
  Period,
  ReplySort,
} from '../delivery/message-reads.service.ts';
import type { LinksService } from '../links/links.service.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import { maxInt32, wholeNumberIn } from '../shared/bounds.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { type Page, parsePage } from '../shared/paging.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { countryOf, normalizeNumber } from '../sms/numbers.ts';
import type { Db } from '../store/db.ts';
import { type CampaignFilter, type CampaignSort, campaignsRepo } from './campaigns.repo.ts';
import { parseDelay } from './delay.ts';
import { numberListsRepo } from './lists.repo.ts';
import { infoOut } from './message-text.ts';

/** What GET /campaign/:ticket and GET /campaigns answer for each campaign. */
export interface CampaignView {
  id: string;
  sender: string;
  text: string;
  creation_date: string;
  date: string;
  cost: number;
  lists: { id: string }[];
  status: CampaignStatus;
  total: number;
  delivered: number;
  error: number;
  expired: number;
  network_error: number;
  stop: number;
  npai: number;
  pending: number;
  delivery_rate: number;
  clicks: number;
}

/** See README.md, "Campaign status". */
export type CampaignStatus = 'scheduled' | 'sending' | 'sent' | 'done' | 'cancelled';

type QueryText = string | undefined;

export interface CampaignsQuery {
  start?: string;
  length?: string;
  date_start?: string;
  date_end?: string;
  sms_min?: string;
  sms_max?: string;
  destination?: string;
  text?: string;
  sort?: string;
}

export interface MessagesQuery {
  start?: string;
  length?: string;
  date_start?: string;
  date_end?: string;
  destination?: string;
  message?: string;
  status?: string;
  country?: string;
  sort?: string;
}

export interface CampaignMessagesQuery {
  start?: string;
  length?: string;
  status?: string;
}

/** What GET /campaign/:ticket/messages answers for each message. */
export interface CampaignMessageView {
  id: string;
  destination: string;
  gsmsmsid: string;
  /** The DLR code it reports. */
  status: number;
  /** When it was due to go: the campaign's date, later for a retry or a marketing message held to the window. */
  date: string;
  /** When the SMSC accepted it; null for a message not sent (yet). */
  sent_date: string | null;
  /** When it reached its final outcome; null before. */
  delivery_date: string | null;
  /** Clicks counted on its short links. */
  clicks: number;
}

export type ClickBucket = 'hour' | 'day';

export interface RepliesQuery {
  start?: string;
  length?: string;
  date_start?: string;
  date_end?: string;
  sort?: string;
}

/** The contact fields a reply, STOP or NPAI number tells: a list contact's, else empty strings. */
interface ContactInfo {
  info1: string;
  info2: string;
  info3: string;
  info4: string;
}

const noInfo: ContactInfo = { info1: '', info2: '', info3: '', info4: '' };

/** The longest `text` (GET /campaigns) or `message` (GET /messages) a substring filter takes. */
const maxTextFilter = 160;
/** The most campaigns a `destination` filter of GET /campaigns narrows to. */
const maxDestinationCampaigns = 1000;
/** The period a history read covers when it is given no date, or one of its two. */
const defaultHistoryMs = 24 * 3_600_000;
/** The longest period one history read covers. */
const maxHistoryDays = 31;
const maxHistoryMs = maxHistoryDays * 24 * 3_600_000;
/** Messages a `country` filter on a calling code several countries share reads, at most, to tell them apart. */
const maxCountryScan = 10_000;

/** The most messages one page of GET /campaign/:ticket/messages answers. */
const maxCampaignMessagesPage = 500;
const clickBuckets: readonly ClickBucket[] = ['hour', 'day'];

const campaignSorts = ['id', 'date', 'text', 'cost', 'status'] as const;
const messageSorts = ['id', 'date', 'destination', 'status'] as const;
const replySorts = ['id', 'date', 'text'] as const;
const dlrCodes = new Set<number>(Object.values(DlrStatus));
const wholeNumber = /^\d+$/;

const finalStates = new Set(['delivered', 'failed', 'expired']);

type CampaignRow = NonNullable<Awaited<ReturnType<typeof campaignsRepo.find>>>;

interface Tally {
  messages: number;
  /** Queued (or held) and never attempted. */
  untaken: number;
  /** Queued again after an attempt, or leased by a worker now. */
  inWorker: number;
  submitted: number;
  final: number;
  delivered: number;
  error: number;
  expired: number;
  networkError: number;
  npai: number;
}

const emptyTally = (): Tally => ({
  messages: 0,
  untaken: 0,
  inWorker: 0,
  submitted: 0,
  final: 0,
  delivered: 0,
  error: 0,
  expired: 0,
  networkError: 0,
  npai: 0,
});

/** Derives a campaign's status from where its messages are (README.md, "Campaign status"). */
export function statusOf(stored: string, t: Tally): CampaignStatus {
  if (stored === 'cancelled') return 'cancelled';
  if (t.final === t.messages) return 'done';
  if (t.untaken === t.messages) return 'scheduled';
  if (t.untaken + t.inWorker > 0) return 'sending';
  return 'sent';
}

const absent = (value: QueryText): value is undefined => value === undefined || value.trim() === '';

/** `sort` in SMSFactor's syntax: one of `keys`, a leading `-` for descending. */
function parseSort<K extends string>(
  value: QueryText,
  keys: readonly K[],
  fallback: { key: K; descending: boolean },
): { key: K; descending: boolean } {
  if (absent(value)) return fallback;
  const raw = value.trim();
  const descending = raw.startsWith('-');
  const key = (descending ? raw.slice(1) : raw).toLowerCase() as K;
  if (!keys.includes(key)) {
    throw ApiError.data(
      `sort "${value}" must be one of ${keys.join(', ')}, with a leading - to sort descending (e.g. -${keys[0]})`,
    );
  }
  return { key, descending };
}

/**
 * A count filter: a whole number ≥ 0. The column it filters is a 32-bit integer, which PostgreSQL will not
 * compare with a larger one; above that it is the column's largest value, which filters the same.
 */
function parseCount(field: string, value: QueryText): number | undefined {
  if (absent(value)) return undefined;
  return wholeNumberIn(field, value.trim(), { min: 0, max: maxInt32, above: 'clamp' });
}

/** A substring filter: trimmed, at most `maxTextFilter` characters; empty is no filter. */
function parseText(field: string, value: QueryText): string | undefined {
  if (absent(value)) return undefined;
  const text = value.trim();
  const length = [...text].length;
  if (length > maxTextFilter) {
    throw ApiError.data(
      `${field} is ${length} characters long; a ${field} filter holds at most ${maxTextFilter}`,
    );
  }
  return text;
}

/** A number filter, normalized as sends normalize recipients (spaces, a leading + or 00 dropped). */
function parseDestination(value: QueryText): string | undefined {
  if (absent(value)) return undefined;
  const number = normalizeNumber(value);
  if (number === undefined) {
    throw ApiError.data(
      `destination "${value}" must be a phone number in international format: digits, country code first (e.g. 33612345678)`,
    );
  }
  return number;
}

function parseStatus(value: QueryText): number | undefined {
  if (absent(value)) return undefined;
  const raw = value.trim();
  if (!wholeNumber.test(raw) || !dlrCodes.has(Number(raw))) {
    throw ApiError.data(`status "${value}" must be a DLR code: ${[...dlrCodes].join(', ')}`);
  }
  return Number(raw);
}

/** Countries by calling code, built at first use: which calling codes several countries share. */
let countriesByCode: Map<string, string[]> | undefined;

interface CountryFilter {
  code: string;
  callingCode: string;
  /** Other countries with the same calling code: the number itself tells them apart. */
  sharedWith: string[];
}

function parseCountry(value: QueryText): CountryFilter | undefined {
  if (absent(value)) return undefined;
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code) || !isSupportedCountry(code)) {
    throw ApiError.data(`country "${value}" must be an ISO 3166-1 alpha-2 country code (e.g. FR)`);
  }
  if (!countriesByCode) {
    countriesByCode = new Map();
    for (const c of getCountries()) {
      const calling = getCountryCallingCode(c);
      countriesByCode.set(calling, [...(countriesByCode.get(calling) ?? []), c]);
    }
  }
  const callingCode = getCountryCallingCode(code);
  const sharedWith = (countriesByCode.get(callingCode) ?? []).filter((c) => c !== code);
  return { code, callingCode, sharedWith };
}

export type CampaignReads = ReturnType<typeof createCampaignReads>;
export type CampaignReadsDeps = Parameters<typeof createCampaignReads>[0];

export function createCampaignReads(deps: {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'TIMEZONE'>;
  delivery: Pick<
    MessageReadsService,
    | 'stateCounts'
    | 'npaiPage'
    | 'npaiNumbers'
    | 'replies'
    | 'stopCounts'
    | 'recipientContacts'
    | 'npaiCount'
    | 'replyCount'
    | 'campaignsSentTo'
    | 'countMessageHistory'
    | 'messageHistoryPage'
    | 'messageHistoryKeys'
    | 'messagesByIds'
    | 'countReplyHistory'
    | 'replyHistoryPage'
    | 'campaignMessagesPage'
    | 'campaignMessageTotals'
  >;
  links: Pick<LinksService, 'clickCounts' | 'messageClicks' | 'clicksOverTime'>;
}) {
  const { db, clock, config, delivery, links } = deps;

  /** Dates go out as `Y-m-d H:i:s` in TIMEZONE: the form `delay` takes, and the one the Java SDK parses. */
  const { wallTime } = zonedTime(config.TIMEZONE);

  function dateBound(field: string, value: QueryText): number | undefined {
    if (absent(value)) return undefined;
    try {
      return parseDelay(value.trim(), config.TIMEZONE);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      throw ApiError.data(`${field} "${value}" must be a date as Y-m-d H:i:s (e.g. 2026-05-04 14:30:00)`);
    }
  }

  /** `date_start` and `date_end`, inclusive; date_end names a second, so all of that second is in. */
  function dateRange(query: { date_start?: string; date_end?: string }) {
    const from = dateBound('date_start', query.date_start);
    const end = dateBound('date_end', query.date_end);
    if (from !== undefined && end !== undefined && from > end) {
      throw ApiError.data(`date_start "${query.date_start}" is after date_end "${query.date_end}"`);
    }
    return { from, end, to: end === undefined ? undefined : end + 999 };
  }

  /**
   * The period of a history read: the dates given, at most `maxHistoryDays` apart; a missing end is
   * `defaultHistoryMs` from the other, and without either the period ends now.
   */
  function historyPeriod(query: { date_start?: string; date_end?: string }): Period {
    const { from, end } = dateRange(query);
    if (from !== undefined && end !== undefined && end - from > maxHistoryMs) {
      throw ApiError.data(
        `date_start "${query.date_start}" and date_end "${query.date_end}" are more than ${maxHistoryDays} days apart; a history read covers at most ${maxHistoryDays} days`,
      );
    }
    const last = end ?? (from === undefined ? clock.now() : from + defaultHistoryMs);
    return { from: from ?? last - defaultHistoryMs, to: last + 999 };
  }

  async function ownCampaign(auth: AuthContext, ticket: string): Promise<CampaignRow> {
    const id = idIn(ticket);
    const campaign = id === undefined ? undefined : await campaignsRepo.find(db, auth.accountId, id);
    if (!campaign) throw ApiError.notFound(`campaign "${ticket}" not found`);
    return campaign;
  }

  /** Counters of several campaigns: their messages and STOPs (asked of delivery) and their clicks (of links). */
  async function views(accountId: number, campaigns: CampaignRow[]): Promise<CampaignView[]> {
    if (campaigns.length === 0) return [];
    const ids = campaigns.map((c) => Number(c.id));
    const [counts, stops, clicks, lists] = await Promise.all([
      delivery.stateCounts(accountId, ids),
      delivery.stopCounts(accountId, ids),
      links.clickCounts(accountId, ids),
      campaignsRepo.listsOf(db, accountId, ids),
    ]);
    const tallies = new Map<number, Tally>(ids.map((id) => [id, emptyTally()]));
    for (const row of counts) {
      const t = tallies.get(Number(row.campaign_id));
      if (!t) continue;
      const n = Number(row.n);
      t.messages += n;
      // A held message (its sub-account is locked) waits as a queued one does.
      if (row.state === 'queued' || row.state === 'held') {
        if (Number(row.attempts) > 0) t.inWorker += n;
        else t.untaken += n;
      } else if (row.state === 'sending') t.inWorker += n;
      else if (row.state === 'submitted') t.submitted += n;
      else if (finalStates.has(row.state)) {
        t.final += n;
        if (row.state === 'delivered') t.delivered += n;
        else if (row.state === 'expired') t.expired += n;
        else if (row.dlr_status === DlrStatus.invalidDestination) t.npai += n;
        else if (row.dlr_status === DlrStatus.networkError) t.networkError += n;
        else t.error += n;
      }
    }
    const stopOf = new Map(stops.map((s) => [Number(s.campaign_id), Number(s.n)]));
    const clicksOf = new Map(clicks.map((c) => [Number(c.campaign_id), Number(c.clicks)]));
    const listsOf = new Map<number, { id: string }[]>();
    for (const l of lists) {
      const campaignId = Number(l.campaign_id);
      listsOf.set(campaignId, [...(listsOf.get(campaignId) ?? []), { id: idOut(l.list_id) }]);
    }
    return campaigns.map((c) => {
      const id = Number(c.id);
      const t = tallies.get(id) ?? emptyTally();
      return {
        id: idOut(id),
        sender: c.sender ?? '',
        text: c.text,
        creation_date: wallTime(c.created_at),
        date: wallTime(c.due_at),
        cost: Number(c.cost),
        lists: listsOf.get(id) ?? [],
        status: statusOf(c.status, t),
        total: t.messages,
        delivered: t.delivered,
        error: t.error,
        expired: t.expired,
        network_error: t.networkError,
        stop: stopOf.get(id) ?? 0,
        npai: t.npai,
        pending: t.untaken + t.inWorker + t.submitted,
        // Whole percent, rounded down: 100 only when every message was delivered (the Java SDK reads an int).
        delivery_rate: t.messages === 0 ? 0 : Math.floor((t.delivered * 100) / t.messages),
        clicks: clicksOf.get(id) ?? 0,
      };
    });
  }

  /** The fields of list contacts by contact id; a contact deleted since tells none. */
  async function contactInfo(accountId: number, contactIds: Iterable<number | null>) {
    const ids = [...new Set([...contactIds].filter((id): id is number => id !== null))].map(Number);
    const info = new Map<number, ContactInfo>();
    if (ids.length === 0) return info;
    for (const c of await campaignsRepo.contactFields(db, accountId, ids)) {
      info.set(Number(c.id), infoOut(c));
    }
    return info;
  }

  /**
   * Replies (MO) or STOPs about a campaign, a page at a time, each with the contact fields of the number that
   * sent it when the campaign wrote to it as a list contact.
   */
  async function campaignReplies(auth: AuthContext, ticket: string, type: 'MO' | 'STOP', page: Page) {
    const campaign = await ownCampaign(auth, ticket);
    const accountId = auth.accountId;
    const id = Number(campaign.id);
    const [rows, total, lists] = await Promise.all([
      delivery.replies(accountId, id, type, page),
      delivery.replyCount(accountId, id, type),
      campaignsRepo.listsOf(db, accountId, [id]),
    ]);
    // Only a campaign sent to lists has contacts to look up.
    const contactOf = new Map<string, number | null>();
    if (lists.length > 0) {
      const numbers = [...new Set(rows.map((r) => r.number))];
      for (const m of await delivery.recipientContacts(accountId, id, numbers)) {
        contactOf.set(m.recipient, m.contact_id === null ? null : Number(m.contact_id));
      }
    }
    const info = await contactInfo(accountId, contactOf.values());
    const rowsOut = rows.map((r) => {
      const contactId = contactOf.get(r.number);
      return {
        destination: r.number,
        message: r.text,
        date: wallTime(r.received_at),
        ...((contactId == null ? undefined : info.get(contactId)) ?? noInfo),
      };
    });
    return { rows: rowsOut, total };
  }

  /** How the messages of the history read out: their campaign's sender, and a message of a free campaign costs 0. */
  async function messageViews(accountId: number, messages: HistoryMessage[]) {
    const campaignIds = [...new Set(messages.map((m) => m.campaignId))];
    const campaigns =
      campaignIds.length === 0 ? [] : await campaignsRepo.summaries(db, accountId, campaignIds);
    const campaignOf = new Map(campaigns.map((c) => [Number(c.id), c]));
    return messages.map((m) => {
      const campaign = campaignOf.get(m.campaignId);
      return {
        id: idOut(m.id),
        campaign_id: idOut(m.campaignId),
        destination: m.recipient,
        gsmsmsid: m.gsmsmsid ?? '',
        text: m.text,
        sender: campaign?.sender ?? '',
        status: m.status,
        date: wallTime(m.dueAt),
        delivery_date: m.finalAt === null ? '' : wallTime(m.finalAt),
        country_code: countryOf(m.recipient) ?? '',
        cost: campaign !== undefined && Number(campaign.cost) === 0 ? 0 : m.parts,
        route: m.route ?? '',
        connector: m.connector ?? '',
      };
    });
  }

  return {
    /** GET /campaign/:ticket */
    async campaign(auth: AuthContext, ticket: string): Promise<CampaignView> {
      const campaign = await ownCampaign(auth, ticket);
      const [view] = await views(auth.accountId, [campaign]);
      return view;
    },

    /**
     * GET /campaigns: the account's campaigns, newest due first unless `sort` says otherwise, filtered by due
     * date, messages sent, a number written to and a piece of text.
     */
    async campaigns(auth: AuthContext, query: CampaignsQuery) {
      const page = parsePage(query);
      const { from, to } = dateRange(query);
      const sentMin = parseCount('sms_min', query.sms_min);
      const sentMax = parseCount('sms_max', query.sms_max);
      if (sentMin !== undefined && sentMax !== undefined && sentMin > sentMax) {
        throw ApiError.data(`sms_min "${query.sms_min}" is more than sms_max "${query.sms_max}"`);
      }
      const text = parseText('text', query.text);
      const destination = parseDestination(query.destination);
      const sort: CampaignSort = parseSort(query.sort, campaignSorts, { key: 'date', descending: true });

      const accountId = auth.accountId;
      const filter: CampaignFilter = { from, to, sentMin, sentMax, text };
      if (destination !== undefined) {
        // The campaigns that wrote to the number, from its messages; a message is never due before its campaign.
        const ids = await delivery.campaignsSentTo(accountId, destination, from, maxDestinationCampaigns + 1);
        if (ids.length > maxDestinationCampaigns) {
          throw ApiError.data(
            `destination "${query.destination}" was written to by more than ${maxDestinationCampaigns} campaigns${from === undefined ? '' : ' since date_start'}; narrow the search with a later date_start`,
          );
        }
        filter.ids = ids;
      }
      const totalRecords = await campaignsRepo.countAll(db, accountId);
      if (filter.ids?.length === 0) return { campaigns: [], totalRecords, totalDisplayRecords: 0 };
      const [totalDisplayRecords, rows] = await Promise.all([
        campaignsRepo.count(db, accountId, filter),
        campaignsRepo.page(db, accountId, filter, sort, page),
      ]);
      return { campaigns: await views(accountId, rows), totalRecords, totalDisplayRecords };
    },

    /**
     * GET /campaign/:ticket/messages: the campaign's messages in send order, a page at a time (at most
     * `maxCampaignMessagesPage`), each with the DLR code it reports and the clicks on its links; only those
     * reporting `status` when given. `totalRecords` counts the campaign's messages, `totalDisplayRecords`
     * those of that status.
     */
    async campaignMessages(auth: AuthContext, ticket: string, query: CampaignMessagesQuery) {
      const start = parsePage({ start: query.start }).start;
      const length = absent(query.length)
        ? parsePage({}).length
        : wholeNumberIn('length', query.length.trim(), { min: 1, max: maxCampaignMessagesPage });
      const status = parseStatus(query.status);
      const campaign = await ownCampaign(auth, ticket);
      const accountId = auth.accountId;
      const id = Number(campaign.id);
      const [rows, totals] = await Promise.all([
        delivery.campaignMessagesPage(accountId, id, status, { start, length }),
        delivery.campaignMessageTotals(accountId, id, status),
      ]);
      const clicks = await links.messageClicks(
        accountId,
        id,
        rows.map((m) => m.seq),
      );
      const messages: CampaignMessageView[] = rows.map((m) => ({
        id: idOut(m.id),
        destination: m.recipient,
        gsmsmsid: m.gsmsmsid ?? '',
        status: m.status,
        date: wallTime(m.dueAt),
        sent_date: m.sentAt === null ? null : wallTime(m.sentAt),
        delivery_date: m.finalAt === null ? null : wallTime(m.finalAt),
        clicks: clicks.get(m.seq) ?? 0,
      }));
      return { messages, totalRecords: totals.total, totalDisplayRecords: totals.matching };
    },

    /**
     * GET /campaign/:ticket/clicks: clicks on the campaign's short links per hour (default) or day of TIMEZONE,
     * oldest first, only the buckets with clicks, each with the distinct recipients who clicked in it. From
     * the stored clicks: those older than PRUNE_CLICKS_AFTER are gone from it (still in the campaign's `clicks`).
     */
    async campaignClicks(auth: AuthContext, ticket: string, query: { bucket?: string }) {
      const raw = absent(query.bucket) ? 'hour' : query.bucket.trim().toLowerCase();
      if (!clickBuckets.includes(raw as ClickBucket)) {
        throw ApiError.data(`bucket "${query.bucket}" must be one of ${clickBuckets.join(', ')}`);
      }
      const campaign = await ownCampaign(auth, ticket);
      const clicks = await links.clicksOverTime(
        auth.accountId,
        Number(campaign.id),
        config.TIMEZONE,
        raw as ClickBucket,
      );
      return { clicks };
    },

    /** GET /campaign/:ticket/mo: the replies the campaign drew, oldest first. */
    async campaignReplies(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const { rows, total } = await campaignReplies(auth, ticket, 'MO', parsePage({ start, length }));
      return { replies: rows, totalRecords: total, totalDisplayRecords: total };
    },

    /** GET /campaign/:ticket/blacklist: the numbers that answered the campaign with a stop word. */
    async campaignStops(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const { rows, total } = await campaignReplies(auth, ticket, 'STOP', parsePage({ start, length }));
      return {
        stops: rows.map(({ message: _message, ...stop }) => stop),
        totalRecords: total,
        totalDisplayRecords: total,
      };
    },

    /** GET /campaign/:ticket/npai: recipients whose receipt said the number does not exist, in send order. */
    async campaignNpai(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const page = parsePage({ start, length });
      const campaign = await ownCampaign(auth, ticket);
      const accountId = auth.accountId;
      const [rows, total] = await Promise.all([
        delivery.npaiPage(accountId, Number(campaign.id), page),
        delivery.npaiCount(accountId, Number(campaign.id)),
      ]);
      const info = await contactInfo(
        accountId,
        rows.map((r) => (r.contact_id === null ? null : Number(r.contact_id))),
      );
      const npais = rows.map((r) => ({
        destination: r.recipient,
        date: wallTime(r.updated_at),
        ...((r.contact_id === null ? undefined : info.get(Number(r.contact_id))) ?? noInfo),
      }));
      return { npais, totalRecords: total, totalDisplayRecords: total };
    },

    /**
     * PUT /campaign/:ticket/npai: puts those numbers on the account's blacklist, a page at a time in one
     * transaction; answers how many were new (`NPAI`, and `added_contacts` as Pigeon answered before).
     */
    async blacklistCampaignNpai(auth: AuthContext, ticket: string) {
      const campaign = await ownCampaign(auth, ticket);
      const now = clock.now();
      const added = await db.transaction().execute(async (tx) => {
        let added = 0;
        for await (const numbers of delivery.npaiNumbers(tx, auth.accountId, Number(campaign.id))) {
          added += await numberListsRepo.add(
            tx,
            'blacklist',
            auth.accountId,
            numbers,
            now,
            Number(campaign.id),
          );
        }
        return added;
      });
      return { NPAI: added, added_contacts: added };
    },

    /**
     * GET /messages: the account's messages due within a period (at most `maxHistoryDays` days; the last 24
     * hours by default), newest first unless `sort` says otherwise, filtered by number, text, DLR code and
     * country. `totalRecords` counts the period's messages, `totalDisplayRecords` those the filters keep.
     */
    async messageHistory(auth: AuthContext, query: MessagesQuery) {
      const page = parsePage(query);
      const period = historyPeriod(query);
      const destination = parseDestination(query.destination);
      const text = parseText('message', query.message);
      const status = parseStatus(query.status);
      const country = parseCountry(query.country);
      const sort: MessageSort = parseSort(query.sort, messageSorts, { key: 'date', descending: true });

      const accountId = auth.accountId;
      const filter: MessageFilter = { ...period, destination, text, status, prefix: country?.callingCode };
      const totalRecords = await delivery.countMessageHistory(accountId, period);
      if (country === undefined || country.sharedWith.length === 0) {
        // A calling code of one country alone: the prefix is the whole filter.
        const [totalDisplayRecords, rows] = await Promise.all([
          delivery.countMessageHistory(accountId, filter),
          delivery.messageHistoryPage(accountId, filter, sort, page),
        ]);
        return { messages: await messageViews(accountId, rows), totalRecords, totalDisplayRecords };
      }
      // A calling code several countries share (1, 7, 44, 262…): each number tells its country, read in order.
      const keys = await delivery.messageHistoryKeys(accountId, filter, sort, maxCountryScan + 1);
      if (keys.length > maxCountryScan) {
        throw ApiError.data(
          `country "${query.country}" shares its calling code ${country.callingCode} with ${country.sharedWith.join(', ')}, so each number is read to tell them apart, at most ${maxCountryScan} in one request; this period has more: narrow it with date_start and date_end, or add destination`,
        );
      }
      const matching = keys.filter((k) => countryOf(k.recipient) === country.code).map((k) => Number(k.id));
      const pageIds = matching.slice(page.start, page.start + page.length);
      const found = new Map((await delivery.messagesByIds(accountId, pageIds)).map((m) => [m.id, m]));
      const rows = pageIds.map((id) => found.get(id)).filter((m): m is HistoryMessage => m !== undefined);
      return {
        messages: await messageViews(accountId, rows),
        totalRecords,
        totalDisplayRecords: matching.length,
      };
    },

    /**
     * GET /messages/mo: the replies (MO and STOP) the account received within a period (as GET /messages),
     * newest first unless `sort` says otherwise.
     */
    async replyHistory(auth: AuthContext, query: RepliesQuery) {
      const page = parsePage(query);
      const period = historyPeriod(query);
      const sort: ReplySort = parseSort(query.sort, replySorts, { key: 'date', descending: true });
      const [total, rows] = await Promise.all([
        delivery.countReplyHistory(auth.accountId, period),
        delivery.replyHistoryPage(auth.accountId, period, sort, page),
      ]);
      return {
        replies: rows.map((r) => ({
          id: idOut(r.id),
          destination: r.number,
          message: r.text,
          date: wallTime(r.received_at),
          campaign_id: idOut(r.campaign_id),
        })),
        totalRecords: total,
        totalDisplayRecords: total,
      };
    },
  };
}
