// GET /campaign/:ticket and GET /campaigns: campaigns in SMSFactor's shape with their counters. Counters come
// from the campaigns' own messages (one grouped query for every campaign of the answer), their STOP replies
// and their links' click counts, so a read costs what its campaigns hold, never what the whole account holds.
import type { AuthContext } from '../shared/auth-context.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import type { Db } from '../store/db.ts';
import { type CampaignFilter, type CampaignRow, campaignViewsRepo } from './campaign-views.repo.ts';
import { finalStates } from './message-status.ts';
import { type CampaignsQuery, parseCampaignsQuery } from './query-parsers.ts';
import type { CampaignView } from './reads.schemas.ts';

/** See src/campaigns/README.md, "Campaign status". */
export type CampaignStatus = CampaignView['state'];

/** SMSFactor's word for each of Pigeon's states: it says Sent once every message went to the carrier. */
const smsfactorStatus: Record<CampaignStatus, CampaignView['status']> = {
  scheduled: 'Scheduled',
  sending: 'Sending',
  sent: 'Sent',
  done: 'Sent',
  cancelled: 'Cancelled',
  moderation: 'Moderation',
  refused: 'Refused',
};

/**
 * Delivered messages in % of the messages. `exact`: to two decimals (2 of 3: 66.67), as SMSFactor shows it;
 * otherwise a whole percent rounded down, 100 only when every message was delivered, for GET /campaigns,
 * whose `delivery_rate` SMSFactor's Java SDK reads as an integer (a decimal would fail its parse).
 */
export function deliveryRate(delivered: number, messages: number, exact: boolean): number {
  if (messages === 0) return 0;
  if (!exact) return Math.floor((delivered * 100) / messages);
  // Rounded half up to the hundredth, but never up to 100 while a message is not delivered.
  const rate = Math.round((delivered * 10_000) / messages) / 100;
  return rate === 100 && delivered < messages ? 99.99 : rate;
}

/** The most campaigns a `destination` filter of GET /campaigns narrows to. */
const maxDestinationCampaigns = 1000;

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

/** Derives a campaign's status from where its messages are (src/campaigns/README.md, "Campaign status"). */
export function statusOf(stored: string, t: Tally): CampaignStatus {
  if (stored === 'cancelled') return 'cancelled';
  if (stored === 'moderation') return 'moderation';
  if (stored === 'refused') return 'refused';
  if (t.final === t.messages) return 'done';
  if (t.untaken === t.messages) return 'scheduled';
  if (t.untaken + t.inWorker > 0) return 'sending';
  return 'sent';
}

/** The caller's campaign named by `ticket`; -5 for an unknown one or another account's, alike. */
export async function ownCampaign(db: Db, auth: AuthContext, ticket: string): Promise<CampaignRow> {
  const id = idIn(ticket);
  const campaign = id === undefined ? undefined : await campaignViewsRepo.find(db, auth.accountId, id);
  if (!campaign) throw ApiError.notFound(`campaign "${ticket}" not found`);
  return campaign;
}

export type CampaignViewsService = ReturnType<typeof createCampaignViewsService>;

export function createCampaignViewsService(deps: { db: Db; timezone: string }) {
  const { db, timezone } = deps;
  /** Dates go out as `Y-m-d H:i:s` in TIMEZONE: the form `delay` takes, and the one the Java SDK parses. */
  const { wallTime } = zonedTime(timezone);

  /** Counters of several campaigns: their messages, STOPs, clicks and lists, four grouped reads at once. */
  async function views(
    accountId: number,
    campaigns: CampaignRow[],
    exactRate: boolean,
  ): Promise<CampaignView[]> {
    if (campaigns.length === 0) return [];
    const ids = campaigns.map((c) => Number(c.id));
    const [counts, stops, clicks, lists] = await Promise.all([
      campaignViewsRepo.stateCounts(db, accountId, ids),
      campaignViewsRepo.stopCounts(db, accountId, ids),
      campaignViewsRepo.clickCounts(db, accountId, ids),
      campaignViewsRepo.listsOf(db, accountId, ids),
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
      const state = statusOf(c.status, t);
      return {
        id: idOut(id),
        sender: c.sender ?? '',
        text: c.text,
        creation_date: wallTime(c.created_at),
        date: wallTime(c.due_at),
        cost: Number(c.cost),
        lists: listsOf.get(id) ?? [],
        status: smsfactorStatus[state],
        state,
        total: t.messages,
        delivered: t.delivered,
        error: t.error,
        expired: t.expired,
        network_error: t.networkError,
        stop: stopOf.get(id) ?? 0,
        npai: t.npai,
        pending: t.untaken + t.inWorker + t.submitted,
        delivery_rate: deliveryRate(t.delivered, t.messages, exactRate),
        clicks: clicksOf.get(id) ?? 0,
      };
    });
  }

  return {
    /** GET /campaign/:ticket */
    async campaign(auth: AuthContext, ticket: string): Promise<CampaignView> {
      const campaign = await ownCampaign(db, auth, ticket);
      const [view] = await views(auth.accountId, [campaign], true);
      return view;
    },

    /**
     * GET /campaigns: the account's campaigns, newest due first unless `sort` says otherwise, filtered by due
     * date, messages sent, a number written to and a piece of text.
     */
    async campaigns(auth: AuthContext, query: CampaignsQuery) {
      const parsed = parseCampaignsQuery(query, timezone);
      const { page, destination, sort } = parsed;
      const accountId = auth.accountId;
      const filter: CampaignFilter = parsed.filter;
      if (destination !== undefined) {
        const from = filter.from;
        const ids = await campaignViewsRepo.sentTo(
          db,
          accountId,
          destination,
          from,
          maxDestinationCampaigns + 1,
        );
        if (ids.length > maxDestinationCampaigns) {
          throw ApiError.data(
            `destination "${query.destination}" was written to by more than ${maxDestinationCampaigns} campaigns${from === undefined ? '' : ' since date_start'}; narrow the search with a later date_start`,
          );
        }
        filter.ids = ids;
      }
      const totalRecords = await campaignViewsRepo.countAll(db, accountId);
      if (filter.ids?.length === 0) return { campaigns: [], totalRecords, totalDisplayRecords: 0 };
      const [totalDisplayRecords, rows] = await Promise.all([
        campaignViewsRepo.count(db, accountId, filter),
        campaignViewsRepo.page(db, accountId, filter, sort, page),
      ]);
      return { campaigns: await views(accountId, rows, false), totalRecords, totalDisplayRecords };
    },
  };
}
