// The reads' routes: campaigns read back (`/campaign/:ticket…`, `/campaigns`) and the account's message and
// reply history (`/messages`, `/messages/mo`), each one call of a read service.
import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Id, Nullable, pageTotals, WallTime } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import type { CampaignPagesService } from './campaign-pages.service.ts';
import type { CampaignViewsService } from './campaign-views.service.ts';
import type { HistoryService } from './history.service.ts';

const TicketParams = Type.Object({ ticket: Type.String() });
const text = Type.Optional(Type.String());
/** Paging, a period and SMSFactor's `sort`: what every history read takes. */
const HistoryQuery = { ...PageQuery.properties, date_start: text, date_end: text, sort: text };
const CampaignsQuery = Type.Object({
  ...HistoryQuery,
  sms_min: text,
  sms_max: text,
  destination: text,
  text,
});
const MessagesQuery = Type.Object({
  ...HistoryQuery,
  destination: text,
  message: text,
  status: text,
  country: text,
});
const RepliesQuery = Type.Object(HistoryQuery);

const count = Type.Integer();
const Campaign = Type.Object({
  id: Id,
  sender: Type.String(),
  text: Type.String(),
  creation_date: WallTime,
  date: WallTime,
  cost: count,
  lists: Type.Array(Type.Object({ id: Id })),
  status: Type.String({ enum: ['scheduled', 'sending', 'sent', 'done', 'cancelled'] }),
  total: count,
  delivered: count,
  error: count,
  expired: count,
  network_error: count,
  stop: count,
  npai: count,
  pending: count,
  delivery_rate: Type.Integer({ description: 'delivered, in % of the messages' }),
  clicks: count,
});
const info = { info1: Type.String(), info2: Type.String(), info3: Type.String(), info4: Type.String() };
const NumberOfCampaign = Type.Object({ destination: Type.String(), date: WallTime, ...info });
const HistoryMessage = Type.Object({
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

const paged = { params: TicketParams, querystring: PageQuery };

const CampaignMessagesQuery = Type.Object({
  start: text,
  length: Type.Optional(Type.String({ description: 'messages per page: 1 to 500 (100 when absent)' })),
  status: Type.Optional(Type.String({ description: 'only the messages reporting this DLR code' })),
});
const CampaignMessage = Type.Object({
  id: Id,
  destination: Type.String(),
  gsmsmsid: Type.String({ description: 'empty when the send gave none' }),
  status: Type.Integer({ description: 'DLR status code' }),
  date: { ...WallTime, description: 'when it was due to go: the campaign date, later for a retry' },
  sent_date: Nullable({ ...WallTime, description: 'when the SMSC accepted it; null when not sent (yet)' }),
  delivery_date: Nullable({ ...WallTime, description: 'when it reached its final status; null before' }),
  clicks: Type.Integer({ description: 'clicks counted on its short links' }),
});
const ClicksQuery = Type.Object({
  bucket: Type.Optional(Type.String({ description: 'hour (default) or day' })),
});
const ClicksBucket = Type.Object({
  date: {
    ...WallTime,
    description: 'the start of the hour or day, `Y-m-d H:i:s` in the configured time zone',
  },
  clicks: Type.Integer({ description: 'clicks in it' }),
  unique: Type.Integer({ description: 'distinct recipients (messages) who clicked in it' }),
});

export interface ReadServices {
  campaignViews: CampaignViewsService;
  campaignPages: CampaignPagesService;
  history: HistoryService;
}

export function readsRoutes(app: App, reads: ReadServices): void {
  const { campaignViews: views, campaignPages: pages, history } = reads;
  app.get(
    '/campaign/:ticket',
    { schema: { params: TicketParams, response: answer({ campaign: Type.Array(Campaign) }) } },
    async (req) => ok({ campaign: [await views.campaign(caller(req), req.params.ticket)] }),
  );
  app.get(
    '/campaigns',
    {
      schema: {
        querystring: CampaignsQuery,
        response: answer({ campaigns: Type.Array(Campaign), ...pageTotals }),
      },
    },
    async (req) => ok(await views.campaigns(caller(req), req.query)),
  );
  app.get(
    '/campaign/:ticket/messages',
    {
      schema: {
        params: TicketParams,
        querystring: CampaignMessagesQuery,
        response: answer({ messages: Type.Array(CampaignMessage), ...pageTotals }),
      },
    },
    async (req) => ok(await pages.campaignMessages(caller(req), req.params.ticket, req.query)),
  );
  app.get(
    '/campaign/:ticket/clicks',
    {
      schema: {
        params: TicketParams,
        querystring: ClicksQuery,
        response: answer({ clicks: Type.Array(ClicksBucket) }),
      },
    },
    async (req) => ok(await pages.campaignClicks(caller(req), req.params.ticket, req.query)),
  );
  app.get(
    '/campaign/:ticket/mo',
    {
      schema: {
        ...paged,
        response: answer({
          replies: Type.Array(
            Type.Object({ destination: Type.String(), message: Type.String(), date: WallTime, ...info }),
          ),
          ...pageTotals,
        }),
      },
    },
    async (req) =>
      ok(await pages.campaignReplies(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/campaign/:ticket/blacklist',
    { schema: { ...paged, response: answer({ stops: Type.Array(NumberOfCampaign), ...pageTotals }) } },
    async (req) =>
      ok(await pages.campaignStops(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/campaign/:ticket/npai',
    { schema: { ...paged, response: answer({ npais: Type.Array(NumberOfCampaign), ...pageTotals }) } },
    async (req) =>
      ok(await pages.campaignNpai(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/messages',
    {
      schema: {
        querystring: MessagesQuery,
        response: answer({ messages: Type.Array(HistoryMessage), ...pageTotals }),
      },
    },
    async (req) => ok(await history.messageHistory(caller(req), req.query)),
  );
  app.get(
    '/messages/mo',
    {
      schema: {
        querystring: RepliesQuery,
        response: answer({
          replies: Type.Array(
            Type.Object({
              id: Id,
              destination: Type.String(),
              message: Type.String(),
              date: WallTime,
              campaign_id: Id,
            }),
          ),
          ...pageTotals,
        }),
      },
    },
    async (req) => ok(await history.replyHistory(caller(req), req.query)),
  );
}
