// What the reads' routes answer (reads.routes.ts): campaigns read back and the account's message and reply
// history. Each view's type is its schema's `Static`, used by the read services for what they answer and by
// the console for what it reads, so a change here breaks whichever no longer matches. Imports nothing but
// typebox and other schema files (see src/http/response-schemas.ts).
import Type, { type Static } from 'typebox';
import { answer, Id, Nullable, pageTotals, StringEnum, WallTime } from '../http/response-schemas.ts';

const count = Type.Integer();

/** Pigeon's own words for where a campaign is (`state`): see src/campaigns/README.md, "Campaign status". */
export const campaignStatuses = [
  'scheduled',
  'sending',
  'sent',
  'done',
  'cancelled',
  'moderation',
  'refused',
] as const;

/** SMSFactor's words for a campaign's `status`, which its clients read (src/campaigns/README.md). */
export const smsfactorCampaignStatuses = [
  'Scheduled',
  'Sending',
  'Sent',
  'Cancelled',
  'Moderation',
  'Refused',
] as const;

/** One campaign of GET /campaign/:ticket and GET /campaigns, with its counters. */
export const Campaign = Type.Object({
  id: Id,
  sender: Type.String(),
  text: Type.String(),
  creation_date: WallTime,
  date: WallTime,
  cost: count,
  lists: Type.Array(Type.Object({ id: Id })),
  status: StringEnum(smsfactorCampaignStatuses, {
    description:
      "SMSFactor's word: Scheduled, Sending, Sent (every message handed to the carrier), Cancelled; Moderation (held by a content rule until the operator decides) and Refused (refused by the operator, refunded)",
  }),
  state: StringEnum(campaignStatuses, {
    description:
      "Pigeon's detail: sent (receipts still awaited) and done (every message final) are both Sent",
  }),
  total: count,
  delivered: count,
  error: count,
  expired: count,
  network_error: count,
  stop: count,
  npai: count,
  pending: count,
  delivery_rate: Type.Number({
    description:
      "delivered, in % of the messages: to two decimals in GET /campaign/:ticket (2 of 3: 66.67); a whole percent rounded down in GET /campaigns, whose rate SMSFactor's Java SDK reads as an integer",
  }),
  clicks: count,
});
export type CampaignView = Static<typeof Campaign>;

const info = { info1: Type.String(), info2: Type.String(), info3: Type.String(), info4: Type.String() };

/** A number a campaign drew a STOP or an NPAI from, with its list contact's fields. */
export const NumberOfCampaign = Type.Object({ destination: Type.String(), date: WallTime, ...info });
export type NumberOfCampaignView = Static<typeof NumberOfCampaign>;

/** A reply to one campaign, with its list contact's fields. */
export const CampaignReply = Type.Object({
  destination: Type.String(),
  message: Type.String(),
  date: WallTime,
  ...info,
});
export type CampaignReplyView = Static<typeof CampaignReply>;

/** One message of GET /messages. */
export const HistoryMessage = Type.Object({
  id: Id,
  campaign_id: Id,
  destination: Type.String(),
  gsmsmsid: Type.String(),
  text: Type.String(),
  sender: Type.String(),
  status: Type.Integer({ description: 'DLR status code' }),
  date: WallTime,
  delivery_date: Type.String({ description: 'a date `Y-m-d H:i:s`, or empty before a receipt' }),
  country_code: Type.String(),
  cost: count,
  route: Type.String({
    description: 'the route of the connectors file that chose its connector; empty before it was sent',
  }),
  connector: Type.String({ description: 'the connector (SMSC) that accepted it; empty before it was sent' }),
});
export type HistoryMessageView = Static<typeof HistoryMessage>;

/** One reply of GET /messages/mo. */
export const HistoryReply = Type.Object({
  id: Id,
  destination: Type.String(),
  message: Type.String(),
  date: WallTime,
  campaign_id: Id,
});
export type HistoryReplyView = Static<typeof HistoryReply>;

/** One message of GET /campaign/:ticket/messages. */
export const CampaignMessage = Type.Object({
  id: Id,
  destination: Type.String(),
  gsmsmsid: Type.String({ description: 'empty when the send gave none' }),
  status: Type.Integer({ description: 'DLR status code' }),
  date: { ...WallTime, description: 'when it was due to go: the campaign date, later for a retry' },
  sent_date: Nullable({ ...WallTime, description: 'when the SMSC accepted it; null when not sent (yet)' }),
  delivery_date: Nullable({ ...WallTime, description: 'when it reached its final status; null before' }),
  clicks: Type.Integer({ description: 'clicks counted on its short links' }),
});
export type CampaignMessageView = Static<typeof CampaignMessage>;

/** One hour or day of GET /campaign/:ticket/clicks. */
export const ClicksBucket = Type.Object({
  date: {
    ...WallTime,
    description: 'the start of the hour or day, `Y-m-d H:i:s` in the configured time zone',
  },
  clicks: Type.Integer({ description: 'clicks in it' }),
  unique: Type.Integer({ description: 'distinct recipients (messages) who clicked in it' }),
});
export type ClicksBucketView = Static<typeof ClicksBucket>;

export const CampaignAnswer = answer({ campaign: Type.Array(Campaign) });
export const CampaignsAnswer = answer({ campaigns: Type.Array(Campaign), ...pageTotals });
export const CampaignMessagesAnswer = answer({ messages: Type.Array(CampaignMessage), ...pageTotals });
export const CampaignClicksAnswer = answer({ clicks: Type.Array(ClicksBucket) });
export const CampaignRepliesAnswer = answer({ replies: Type.Array(CampaignReply), ...pageTotals });
export const CampaignStopsAnswer = answer({ stops: Type.Array(NumberOfCampaign), ...pageTotals });
export const CampaignNpaiAnswer = answer({ npais: Type.Array(NumberOfCampaign), ...pageTotals });
export const MessagesAnswer = answer({ messages: Type.Array(HistoryMessage), ...pageTotals });
export const RepliesAnswer = answer({ replies: Type.Array(HistoryReply), ...pageTotals });
