// The reads delivery serves only to other capabilities: a campaign's counters, its messages page by page (the
// console's and `pigeon messages`), its NPAI numbers and replies, the account's message and reply history, and
// the credits its sent messages used (for /metrics/consumption). Every read is scoped by account. Moved here
// as they were: the read-only room src/reads/ is to query these tables itself and replace them, and then this
// file and message-reads.repo.ts go together.
import type { Selectable } from 'kysely';
import type { Page } from '../shared/paging.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import type { Db, Executor } from '../store/db.ts';
import type { MessagesTable } from '../store/schema.ts';
import {
  type MessageFilter,
  type MessageSort,
  messageReadsRepo,
  type Period,
  type ReplySort,
  reportedStatus,
} from './message-reads.repo.ts';
import type { ReplyType } from './replies.repo.ts';

export type { MessageFilter, MessageSort, Period, ReplySort } from './message-reads.repo.ts';

/** A message of a campaign as the operator's `pigeon messages` prints it. */
export type CampaignMessage = Pick<
  Selectable<MessagesTable>,
  'seq' | 'recipient' | 'gsmsmsid' | 'text' | 'parts' | 'encoding' | 'state' | 'connector' | 'route'
>;

export type MessageReadsService = ReturnType<typeof createMessageReadsService>;

export function createMessageReadsService(deps: { db: Db }) {
  const { db } = deps;

  return {
    /** The campaigns' messages counted per state and receipt status (with the most attempts of each group). */
    stateCounts(accountId: number, campaignIds: readonly number[]) {
      return messageReadsRepo.stateCounts(db, accountId, campaignIds);
    },

    /**
     * A page of the campaign's messages in send (seq) order, each with the DLR code it reports; only those
     * reporting `status` when given.
     */
    async campaignMessagesPage(
      accountId: number,
      campaignId: number,
      status: number | undefined,
      page: Page,
    ): Promise<CampaignMessageState[]> {
      const rows = await messageReadsRepo.campaignMessagesPage(db, accountId, campaignId, status, page);
      return rows.map((row) => ({
        id: Number(row.id),
        seq: Number(row.seq),
        recipient: row.recipient,
        gsmsmsid: row.gsmsmsid,
        status: reportedStatus(row.state, row.dlr_status === null ? null : Number(row.dlr_status)),
        dueAt: Number(row.due_at),
        sentAt: row.sent_at === null ? null : Number(row.sent_at),
        finalAt: historyFinalStates.has(row.state) ? Number(row.updated_at) : null,
      }));
    },

    /**
     * How many messages the campaign has, and how many of them report `status` (all when not given): one
     * grouped read of the campaign's rows, as its counters take.
     */
    async campaignMessageTotals(accountId: number, campaignId: number, status: number | undefined) {
      let total = 0;
      let matching = 0;
      for (const row of await messageReadsRepo.stateCounts(db, accountId, [campaignId])) {
        const n = Number(row.n);
        total += n;
        const reported = reportedStatus(row.state, row.dlr_status === null ? null : Number(row.dlr_status));
        if (status === undefined || reported === status) matching += n;
      }
      return { total, matching };
    },

    /** A page of the campaign's messages whose receipt said the number does not exist, in seq order. */
    npaiPage(accountId: number, campaignId: number, page: Page) {
      return messageReadsRepo.withStatusPage(db, accountId, campaignId, DlrStatus.invalidDestination, page);
    },

    /**
     * The numbers of the campaign's messages whose receipt said the number does not exist, in seq order, a
     * page at a time (keyset), read in the caller's transaction: never the whole campaign in memory.
     */
    async *npaiNumbers(
      tx: Executor,
      accountId: number,
      campaignId: number,
      pageSize = 1000,
    ): AsyncGenerator<string[]> {
      for (let after = -1; ; ) {
        const page = await messageReadsRepo.withStatusAfter(
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

    /** A page of the replies of one type (MO, STOP) a campaign drew, in arrival order. */
    replies(accountId: number, campaignId: number, type: ReplyType, page: Page) {
      return messageReadsRepo.repliesPage(db, accountId, campaignId, type, page);
    },

    /** How many STOP replies each of the campaigns drew (campaigns without any are absent). */
    stopCounts(accountId: number, campaignIds: readonly number[]) {
      return messageReadsRepo.replyCounts(db, accountId, campaignIds, 'STOP');
    },

    /** Every message of a campaign in seq order, a page at a time. */
    async *campaignMessages(
      accountId: number,
      campaignId: number,
      pageSize = 1000,
    ): AsyncGenerator<CampaignMessage> {
      for (let after = -1; ; ) {
        const page = await messageReadsRepo.messagesAfter(db, accountId, campaignId, after, pageSize);
        yield* page;
        if (page.length < pageSize) return;
        after = Number(page[page.length - 1].seq);
      }
    },

    /** The contact each of `numbers` was when the campaign wrote to it (null: not a list contact). */
    async recipientContacts(accountId: number, campaignId: number, numbers: readonly string[]) {
      if (numbers.length === 0) return [];
      return messageReadsRepo.contactsOfRecipients(db, accountId, campaignId, numbers);
    },

    /** How many of the campaign's messages had a receipt saying the number does not exist. */
    npaiCount(accountId: number, campaignId: number): Promise<number> {
      return messageReadsRepo.countWithStatus(db, accountId, campaignId, DlrStatus.invalidDestination);
    },

    /** How many replies of one type (MO, STOP) a campaign drew. */
    replyCount(accountId: number, campaignId: number, type: ReplyType): Promise<number> {
      return messageReadsRepo.countCampaignReplies(db, accountId, campaignId, type);
    },

    /** The account's campaigns that wrote to `number`, with a message due from `dueFrom` if given; at most `limit`. */
    campaignsSentTo(accountId: number, number: string, dueFrom: number | undefined, limit: number) {
      return messageReadsRepo.campaignsSentTo(db, accountId, number, dueFrom, limit);
    },

    /** How many of the account's messages due within the filter's period match it. */
    countMessageHistory(accountId: number, filter: MessageFilter): Promise<number> {
      return messageReadsRepo.countMessageHistory(db, accountId, filter);
    },

    /** A page of the account's messages matching the filter, each with the DLR code it reports. */
    async messageHistoryPage(
      accountId: number,
      filter: MessageFilter,
      sort: MessageSort,
      page: Page,
    ): Promise<HistoryMessage[]> {
      return (await messageReadsRepo.messageHistoryPage(db, accountId, filter, sort, page)).map(
        historyMessage,
      );
    },

    /** Ids and recipients of the first `limit` messages matching the filter, in the order asked. */
    messageHistoryKeys(accountId: number, filter: MessageFilter, sort: MessageSort, limit: number) {
      return messageReadsRepo.messageHistoryKeys(db, accountId, filter, sort, limit);
    },

    /** The account's messages with these ids, as `messageHistoryPage` gives them, in no particular order. */
    async messagesByIds(accountId: number, ids: readonly number[]): Promise<HistoryMessage[]> {
      if (ids.length === 0) return [];
      return (await messageReadsRepo.messagesByIds(db, accountId, ids)).map(historyMessage);
    },

    /** How many replies (MO and STOP) the account received within the period. */
    countReplyHistory(accountId: number, period: Period): Promise<number> {
      return messageReadsRepo.countReplyHistory(db, accountId, period);
    },

    /** A page of the replies (MO and STOP) the account received within the period. */
    replyHistoryPage(accountId: number, period: Period, sort: ReplySort, page: Page) {
      return messageReadsRepo.replyHistoryPage(db, accountId, period, sort, page);
    },

    /**
     * What the accounts' messages sent within the period (accepted by the SMSC: `sent_at`) used, in parts, per
     * account and recipient country (null when the numbering plan tells none); only `countries` when given
     * (null among them: numbers of no country). Messages never sent (cancelled, refused, expired before a
     * submit, still queued) count for nothing.
     */
    async sentCredits(
      accountIds: readonly number[],
      period: Period,
      countries?: readonly (string | null)[],
    ): Promise<{ accountId: number; country: string | null; credits: number }[]> {
      if (accountIds.length === 0 || countries?.length === 0) return [];
      const rows = await messageReadsRepo.sentParts(db, accountIds, period, countries);
      return rows.map((r) => ({ accountId: r.account_id, country: r.country, credits: r.parts }));
    },
  };
}

/** A message as the history (GET /messages) reads it. */
export interface HistoryMessage {
  id: number;
  campaignId: number;
  recipient: string;
  gsmsmsid: string | null;
  text: string;
  parts: number;
  /** The DLR code it reports: its receipt's, 0 if cancelled, else 1 (no receipt yet). */
  status: number;
  dueAt: number;
  /** When it reached its final outcome (delivered, failed, expired); null before. */
  finalAt: number | null;
  /** The connector and route that carried it (CONNECTORS_FILE names); null before it was sent. */
  connector: string | null;
  route: string | null;
}

const historyFinalStates = new Set(['delivered', 'failed', 'expired']);

/** A message of a campaign as GET /campaign/:ticket/messages reads it. */
export interface CampaignMessageState {
  id: number;
  /** Its position in the campaign: its links point at it. */
  seq: number;
  recipient: string;
  gsmsmsid: string | null;
  /** The DLR code it reports: its receipt's, 0 if cancelled, else 1 (no receipt yet). */
  status: number;
  dueAt: number;
  /** When the SMSC accepted it; null for a message never sent. */
  sentAt: number | null;
  /** When it reached its final outcome (delivered, failed, expired); null before. */
  finalAt: number | null;
}

function historyMessage(
  row: Awaited<ReturnType<typeof messageReadsRepo.messagesByIds>>[number],
): HistoryMessage {
  return {
    id: Number(row.id),
    campaignId: Number(row.campaign_id),
    recipient: row.recipient,
    gsmsmsid: row.gsmsmsid,
    text: row.text,
    parts: Number(row.parts),
    status: reportedStatus(row.state, row.dlr_status === null ? null : Number(row.dlr_status)),
    dueAt: Number(row.due_at),
    finalAt: historyFinalStates.has(row.state) ? Number(row.updated_at) : null,
    connector: row.connector,
    route: row.route,
  };
}
