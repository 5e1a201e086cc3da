// Reading campaigns back: one campaign or a page of them with their counters, the replies and STOPs they
// drew, their NPAI numbers, and blacklisting those. Counters are computed from the campaign's own messages
// (one grouped query for every campaign of the answer), so a read costs what its campaigns hold, never what
// the whole account holds.
import type { Config } from '../config.ts';
import type { DeliveryService } from '../delivery/delivery.service.ts';
import type { LinksService } from '../links/links.service.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { type Page, parsePage } from '../shared/paging.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import type { Db } from '../store/db.ts';
import { campaignsRepo, type DueRange } from './campaigns.repo.ts';
import { parseDelay } from './delay.ts';
import { numberListsRepo } from './lists.repo.ts';

/** What GET /campaign/:ticket and GET /campaigns answer for each campaign. */
export interface CampaignView {
  id: string;
  sender: string;
  text: string;
  creation_date: string;
  date: string;
  cost: number;
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

export interface CampaignsQuery {
  start?: string;
  length?: string;
  date_start?: string;
  date_end?: string;
  sort?: string;
}

const finalStates = new Set(['delivered', 'failed', 'expired']);

type CampaignRow = NonNullable<Awaited<ReturnType<typeof campaignsRepo.find>>>;

interface Tally {
  messages: number;
  /** Queued and never attempted. */
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

export type CampaignReads = ReturnType<typeof createCampaignReads>;

export function createCampaignReads(deps: {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'TIMEZONE'>;
  delivery: Pick<DeliveryService, 'stateCounts' | 'npaiPage' | 'npaiNumbers' | 'replies' | 'stopCounts'>;
  links: Pick<LinksService, 'clickCounts'>;
}) {
  const { db, clock, config, delivery, links } = deps;

  /** Dates go out as `Y-m-d H:i:s` in TIMEZONE: the form `delay` takes, and the one the Java SDK parses. */
  const { wallTime } = zonedTime(config.TIMEZONE);

  function dateBound(field: string, value: string | undefined): number | undefined {
    if (value === undefined || value.trim() === '') return undefined;
    try {
      return parseDelay(value.trim(), config.TIMEZONE);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      throw ApiError.data(`${field} "${value}" must be a date as Y-m-d H:i:s (e.g. 2026-05-04 14:30:00)`);
    }
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
    const [counts, stops, clicks] = await Promise.all([
      delivery.stateCounts(accountId, ids),
      delivery.stopCounts(accountId, ids),
      links.clickCounts(accountId, ids),
    ]);
    const tallies = new Map<number, Tally>(ids.map((id) => [id, emptyTally()]));
    for (const row of counts) {
      const t = tallies.get(Number(row.campaign_id));
      if (!t) continue;
      const n = Number(row.n);
      t.messages += n;
      if (row.state === 'queued') {
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

  /** Replies (MO) or STOPs about a campaign, a page at a time. */
  async function replies(auth: AuthContext, ticket: string, type: 'MO' | 'STOP', page: Page) {
    const campaign = await ownCampaign(auth, ticket);
    const rows = await delivery.replies(auth.accountId, Number(campaign.id), type, page);
    return rows.map((r) => ({ date: wallTime(r.received_at), from: r.number, message: r.text }));
  }

  return {
    /** GET /campaign/:ticket */
    async campaign(auth: AuthContext, ticket: string): Promise<CampaignView> {
      const campaign = await ownCampaign(auth, ticket);
      const [view] = await views(auth.accountId, [campaign]);
      return view;
    },

    /** GET /campaigns: the account's campaigns by due date (newest first unless `sort` is asc). */
    async campaigns(auth: AuthContext, query: CampaignsQuery) {
      const page = parsePage(query);
      const end = dateBound('date_end', query.date_end);
      // date_end names a second: everything due within that second is included.
      const range: DueRange = {
        from: dateBound('date_start', query.date_start),
        to: end === undefined ? undefined : end + 999,
      };
      if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
        throw ApiError.data(`date_start "${query.date_start}" is after date_end "${query.date_end}"`);
      }
      const sort = (query.sort ?? '').trim().toLowerCase() || 'desc';
      if (sort !== 'asc' && sort !== 'desc') throw ApiError.data(`sort "${query.sort}" must be asc or desc`);
      const [totalRecords, rows] = await Promise.all([
        campaignsRepo.count(db, auth.accountId, range),
        campaignsRepo.page(db, auth.accountId, range, { ...page, ascending: sort === 'asc' }),
      ]);
      return { campaigns: await views(auth.accountId, rows), totalRecords };
    },

    /** GET /campaign/:ticket/mo */
    async campaignReplies(auth: AuthContext, ticket: string, start?: string, length?: string) {
      return replies(auth, ticket, 'MO', parsePage({ start, length }));
    },

    /** GET /campaign/:ticket/blacklist: the numbers that answered the campaign with a stop word. */
    async campaignStops(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const page = parsePage({ start, length });
      return (await replies(auth, ticket, 'STOP', page)).map((r) => ({
        number: r.from,
        date: r.date,
        message: r.message,
      }));
    },

    /** GET /campaign/:ticket/npai: recipients whose receipt said the number does not exist. */
    async campaignNpai(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const page = parsePage({ start, length });
      const campaign = await ownCampaign(auth, ticket);
      const rows = await delivery.npaiPage(auth.accountId, Number(campaign.id), page);
      return rows.map((r) => ({
        number: r.recipient,
        gsmsmsid: r.gsmsmsid ?? '',
        date: wallTime(r.updated_at),
      }));
    },

    /**
     * PUT /campaign/:ticket/npai: puts those numbers on the account's blacklist, a page at a time in one
     * transaction; answers how many were new.
     */
    async blacklistCampaignNpai(auth: AuthContext, ticket: string) {
      const campaign = await ownCampaign(auth, ticket);
      const now = clock.now();
      const added = await db.transaction().execute(async (tx) => {
        let added = 0;
        for await (const numbers of delivery.npaiNumbers(tx, auth.accountId, Number(campaign.id))) {
          added += await numberListsRepo.add(tx, 'blacklist', auth.accountId, numbers, now);
        }
        return added;
      });
      return { added_contacts: added };
    },
  };
}
