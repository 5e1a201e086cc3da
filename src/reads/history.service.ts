// GET /messages and GET /messages/mo: the account's messages and replies over a period (at most 31 days; the
// last 24 hours by default), bounded by their period, never the whole account.
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { countryOf } from '../sms/numbers.ts';
import type { Db } from '../store/db.ts';
import { type HistoryRow, historyRepo, type MessageFilter } from './history.repo.ts';
import { finalAt, reportedStatus } from './message-status.ts';
import {
  type MessagesQuery,
  parseMessagesQuery,
  parseRepliesQuery,
  type RepliesQuery,
} from './query-parsers.ts';

/** Messages a `country` filter on a calling code several countries share reads, at most, to tell them apart. */
const maxCountryScan = 10_000;

export type HistoryService = ReturnType<typeof createHistoryService>;

export function createHistoryService(deps: { db: Db; clock: Clock; timezone: string }) {
  const { db, clock, timezone } = deps;
  const { wallTime } = zonedTime(timezone);

  /**
   * How the messages read out: their campaign's sender, and what each was charged at its send (its parts for a
   * message stored before prices); a message of a free or cancelled campaign costs 0.
   */
  async function messageViews(accountId: number, messages: HistoryRow[]) {
    const campaignIds = [...new Set(messages.map((m) => Number(m.campaign_id)))];
    const campaigns =
      campaignIds.length === 0 ? [] : await historyRepo.campaignSummaries(db, accountId, campaignIds);
    const campaignOf = new Map(campaigns.map((c) => [Number(c.id), c]));
    return messages.map((m) => {
      const campaign = campaignOf.get(Number(m.campaign_id));
      const done = finalAt(m);
      return {
        id: idOut(Number(m.id)),
        campaign_id: idOut(Number(m.campaign_id)),
        destination: m.recipient,
        gsmsmsid: m.gsmsmsid ?? '',
        text: m.text,
        sender: campaign?.sender ?? '',
        status: reportedStatus(m.state, m.dlr_status === null ? null : Number(m.dlr_status)),
        date: wallTime(Number(m.due_at)),
        delivery_date: done === null ? '' : wallTime(done),
        country_code: countryOf(m.recipient) ?? '',
        cost: campaign !== undefined && Number(campaign.cost) === 0 ? 0 : Number(m.credits ?? m.parts),
        route: m.route ?? '',
        connector: m.connector ?? '',
      };
    });
  }

  return {
    /**
     * GET /messages: the account's messages due within a period, newest first unless `sort` says otherwise,
     * filtered by number, text, DLR code and country. `totalRecords` counts the period's messages,
     * `totalDisplayRecords` those the filters keep.
     */
    async messageHistory(auth: AuthContext, query: MessagesQuery) {
      const { page, period, destination, text, status, country, sort } = parseMessagesQuery(
        query,
        timezone,
        clock.now(),
      );
      const accountId = auth.accountId;
      const filter: MessageFilter = { ...period, destination, text, status, prefix: country?.callingCode };
      const totalRecords = await historyRepo.countMessages(db, accountId, period);
      if (country === undefined || country.sharedWith.length === 0) {
        // A calling code of one country alone: the prefix is the whole filter.
        const [totalDisplayRecords, rows] = await Promise.all([
          historyRepo.countMessages(db, accountId, filter),
          historyRepo.messagesPage(db, accountId, filter, sort, page),
        ]);
        return { messages: await messageViews(accountId, rows), totalRecords, totalDisplayRecords };
      }
      // A calling code several countries share (1, 7, 44, 262…): each number tells its country, read in order.
      const keys = await historyRepo.messageKeys(db, accountId, filter, sort, maxCountryScan + 1);
      if (keys.length > maxCountryScan) {
        throw ApiError.data(
          `country "${query.country}" shares its calling code ${country.callingCode} with ${country.sharedWith.join(', ')}, so each number is read to tell them apart, at most ${maxCountryScan} in one request; this period has more: narrow it with date_start and date_end, or add destination`,
        );
      }
      const matching = keys.filter((k) => countryOf(k.recipient) === country.code).map((k) => Number(k.id));
      const pageIds = matching.slice(page.start, page.start + page.length);
      const found = pageIds.length === 0 ? [] : await historyRepo.messagesByIds(db, accountId, pageIds);
      const byId = new Map(found.map((m) => [Number(m.id), m]));
      const rows = pageIds.map((id) => byId.get(id)).filter((m): m is HistoryRow => m !== undefined);
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
      const { page, period, sort } = parseRepliesQuery(query, timezone, clock.now());
      const [total, rows] = await Promise.all([
        historyRepo.countReplies(db, auth.accountId, period),
        historyRepo.repliesPage(db, auth.accountId, period, sort, page),
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
