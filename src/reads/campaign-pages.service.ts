// One campaign's pages: its messages in send order (the console's campaign page), its clicks over time, the
// replies and STOPs it drew and its NPAI numbers, each with the list contact fields of its number.
import { infoOut } from '../campaigns/message-text.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { type Page, parsePage } from '../shared/paging.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db } from '../store/db.ts';
import { wallLabel } from '../store/wall-clock.ts';
import { campaignPagesRepo, type ReplyType } from './campaign-pages.repo.ts';
import { campaignViewsRepo } from './campaign-views.repo.ts';
import { ownCampaign } from './campaign-views.service.ts';
import { finalAt, reportedStatus } from './message-status.ts';
import { type CampaignMessagesQuery, parseCampaignMessagesQuery, parseClickBucket } from './query-parsers.ts';
import type { CampaignMessageView } from './reads.schemas.ts';

/** The contact fields a reply, STOP or NPAI number tells: a list contact's, else empty strings. */
interface ContactInfo {
  info1: string;
  info2: string;
  info3: string;
  info4: string;
}

/** A line of `pigeon messages`: one message as sent, with the connector and route that carried it. */
export interface MessageLine {
  recipient: string;
  gsmsmsid: string | null;
  text: string;
  parts: number;
  encoding: string;
  state: string;
  connector: string | null;
  route: string | null;
}

const noInfo: ContactInfo = { info1: '', info2: '', info3: '', info4: '' };

/** Message seqs per lookup of their clicks. */
const maxSeqsPerLookup = 500;

export type CampaignPagesService = ReturnType<typeof createCampaignPagesService>;

export function createCampaignPagesService(deps: { db: Db; timezone: string }) {
  const { db, timezone } = deps;
  const { wallTime } = zonedTime(timezone);

  /** The fields of list contacts by contact id; a contact deleted since tells none. */
  async function contactInfo(accountId: number, contactIds: Iterable<number | null>) {
    const ids = [...new Set([...contactIds].filter((id): id is number => id !== null))].map(Number);
    const info = new Map<number, ContactInfo>();
    if (ids.length === 0) return info;
    for (const c of await campaignPagesRepo.contactFields(db, accountId, ids)) {
      info.set(Number(c.id), infoOut(c));
    }
    return info;
  }

  /** Clicks counted on the links of these messages of a campaign, by message seq (absent: none). */
  async function messageClicks(accountId: number, campaignId: number, seqs: readonly number[]) {
    const clicks = new Map<number, number>();
    for (let i = 0; i < seqs.length; i += maxSeqsPerLookup) {
      const chunk = seqs.slice(i, i + maxSeqsPerLookup);
      for (const r of await campaignPagesRepo.messageClicks(db, accountId, campaignId, chunk)) {
        clicks.set(r.seq, r.clicks);
      }
    }
    return clicks;
  }

  /**
   * Replies (MO) or STOPs about a campaign, a page at a time, each with the contact fields of the number that
   * sent it when the campaign wrote to it as a list contact.
   */
  async function replies(auth: AuthContext, ticket: string, type: ReplyType, page: Page) {
    const campaign = await ownCampaign(db, auth, ticket);
    const accountId = auth.accountId;
    const id = Number(campaign.id);
    const [rows, total, lists] = await Promise.all([
      campaignPagesRepo.repliesPage(db, accountId, id, type, page),
      campaignPagesRepo.countReplies(db, accountId, id, type),
      campaignViewsRepo.listsOf(db, accountId, [id]),
    ]);
    // Only a campaign sent to lists has contacts to look up.
    const contactOf = new Map<string, number | null>();
    const numbers = [...new Set(rows.map((r) => r.number))];
    if (lists.length > 0 && numbers.length > 0) {
      for (const m of await campaignPagesRepo.contactsOfRecipients(db, accountId, id, numbers)) {
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

  return {
    /**
     * Every message of a campaign in seq order, a page at a time, written as it comes (the operator's `pigeon
     * messages`, which may name any account's campaign): never the whole campaign in memory.
     */
    async *operatorMessages(ticket: string, pageSize = 1000): AsyncGenerator<MessageLine> {
      const id = idIn(ticket);
      const owner = id === undefined ? undefined : await campaignPagesRepo.ownerOf(db, id);
      if (id === undefined || !owner) throw ApiError.notFound(`campaign "${ticket}" not found`);
      const accountId = Number(owner.account_id);
      for (let after = -1; ; ) {
        const page = await campaignPagesRepo.messagesAfter(db, accountId, id, after, pageSize);
        for (const m of page) {
          yield {
            recipient: m.recipient,
            gsmsmsid: m.gsmsmsid,
            text: m.text,
            parts: Number(m.parts),
            encoding: m.encoding,
            state: m.state,
            connector: m.connector,
            route: m.route,
          };
        }
        if (page.length < pageSize) return;
        after = Number(page[page.length - 1].seq);
      }
    },

    /**
     * GET /campaign/:ticket/messages: the campaign's messages in send order, a page at a time (at most 500),
     * each with the DLR code it reports and the clicks on its links; only those reporting `status` when given.
     * `totalRecords` counts the campaign's messages, `totalDisplayRecords` those of that status, both from one
     * grouped read of its messages, as its counters.
     */
    async campaignMessages(auth: AuthContext, ticket: string, query: CampaignMessagesQuery) {
      const { page, status } = parseCampaignMessagesQuery(query);
      const campaign = await ownCampaign(db, auth, ticket);
      const accountId = auth.accountId;
      const id = Number(campaign.id);
      const [rows, counts] = await Promise.all([
        campaignPagesRepo.messagesPage(db, accountId, id, status, page),
        campaignViewsRepo.stateCounts(db, accountId, [id]),
      ]);
      let total = 0;
      let matching = 0;
      for (const row of counts) {
        const n = Number(row.n);
        total += n;
        const reported = reportedStatus(row.state, row.dlr_status === null ? null : Number(row.dlr_status));
        if (status === undefined || reported === status) matching += n;
      }
      const clicks = await messageClicks(
        accountId,
        id,
        rows.map((m) => Number(m.seq)),
      );
      const messages: CampaignMessageView[] = rows.map((m) => {
        const done = finalAt(m);
        return {
          id: idOut(m.id),
          destination: m.recipient,
          gsmsmsid: m.gsmsmsid ?? '',
          status: reportedStatus(m.state, m.dlr_status === null ? null : Number(m.dlr_status)),
          date: wallTime(Number(m.due_at)),
          sent_date: m.sent_at === null ? null : wallTime(Number(m.sent_at)),
          delivery_date: done === null ? null : wallTime(done),
          clicks: clicks.get(Number(m.seq)) ?? 0,
        };
      });
      return { messages, totalRecords: total, totalDisplayRecords: matching };
    },

    /**
     * GET /campaign/:ticket/clicks: clicks on the campaign's short links per hour (default) or day of TIMEZONE,
     * oldest first, only the buckets with clicks, each with the distinct recipients who clicked in it. From
     * the stored clicks: those older than PRUNE_CLICKS_AFTER are gone from it (still in the campaign's `clicks`).
     */
    async campaignClicks(auth: AuthContext, ticket: string, query: { bucket?: string }) {
      const bucket = parseClickBucket(query.bucket);
      const campaign = await ownCampaign(db, auth, ticket);
      const accountId = auth.accountId;
      const id = Number(campaign.id);
      const span = await campaignPagesRepo.clickSpan(db, accountId, id);
      if (!span) return { clicks: [] };
      const rows = await campaignPagesRepo.clicksPerBucket(
        db,
        accountId,
        id,
        timezone,
        bucket,
        span.first,
        span.last,
      );
      return {
        clicks: rows.map((r) => ({
          date: wallLabel(r.bucket, 'dateTime'),
          clicks: r.clicks,
          unique: r.unique,
        })),
      };
    },

    /** GET /campaign/:ticket/mo: the replies the campaign drew, oldest first. */
    async campaignReplies(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const { rows, total } = await replies(auth, ticket, 'MO', parsePage({ start, length }));
      return { replies: rows, totalRecords: total, totalDisplayRecords: total };
    },

    /** GET /campaign/:ticket/blacklist: the numbers that answered the campaign with a stop word. */
    async campaignStops(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const { rows, total } = await replies(auth, ticket, 'STOP', parsePage({ start, length }));
      return {
        stops: rows.map(({ message: _message, ...stop }) => stop),
        totalRecords: total,
        totalDisplayRecords: total,
      };
    },

    /** GET /campaign/:ticket/npai: recipients whose receipt said the number does not exist, in send order. */
    async campaignNpai(auth: AuthContext, ticket: string, start?: string, length?: string) {
      const page = parsePage({ start, length });
      const campaign = await ownCampaign(db, auth, ticket);
      const accountId = auth.accountId;
      const id = Number(campaign.id);
      const [rows, total] = await Promise.all([
        campaignPagesRepo.npaiPage(db, accountId, id, page),
        campaignPagesRepo.countNpai(db, accountId, id),
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
  };
}
