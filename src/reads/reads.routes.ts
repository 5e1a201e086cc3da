// The reads' routes: campaigns read back (`/campaign/:ticket…`, `/campaigns`) and the account's message and
// reply history (`/messages`, `/messages/mo`), each one call of a read service.
import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import type { CampaignPagesService } from './campaign-pages.service.ts';
import type { CampaignViewsService } from './campaign-views.service.ts';
import type { HistoryService } from './history.service.ts';
import {
  CampaignAnswer,
  CampaignClicksAnswer,
  CampaignMessagesAnswer,
  CampaignNpaiAnswer,
  CampaignRepliesAnswer,
  CampaignStopsAnswer,
  CampaignsAnswer,
  MessagesAnswer,
  RepliesAnswer,
} from './reads.schemas.ts';

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

const paged = { params: TicketParams, querystring: PageQuery };

const CampaignMessagesQuery = Type.Object({
  start: text,
  length: Type.Optional(Type.String({ description: 'messages per page: 1 to 500 (100 when absent)' })),
  status: Type.Optional(Type.String({ description: 'only the messages reporting this DLR code' })),
});
const ClicksQuery = Type.Object({
  bucket: Type.Optional(Type.String({ description: 'hour (default) or day' })),
});
export interface ReadServices {
  campaignViews: CampaignViewsService;
  campaignPages: CampaignPagesService;
  history: HistoryService;
}

export function readsRoutes(app: App, reads: ReadServices): void {
  const { campaignViews: views, campaignPages: pages, history } = reads;
  app.get('/campaign/:ticket', { schema: { params: TicketParams, response: CampaignAnswer } }, async (req) =>
    ok({ campaign: [await views.campaign(caller(req), req.params.ticket)] }),
  );
  app.get(
    '/campaigns',
    {
      schema: {
        querystring: CampaignsQuery,
        response: CampaignsAnswer,
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
        response: CampaignMessagesAnswer,
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
        response: CampaignClicksAnswer,
      },
    },
    async (req) => ok(await pages.campaignClicks(caller(req), req.params.ticket, req.query)),
  );
  app.get(
    '/campaign/:ticket/mo',
    {
      schema: {
        ...paged,
        response: CampaignRepliesAnswer,
      },
    },
    async (req) =>
      ok(await pages.campaignReplies(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/campaign/:ticket/blacklist',
    { schema: { ...paged, response: CampaignStopsAnswer } },
    async (req) =>
      ok(await pages.campaignStops(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get('/campaign/:ticket/npai', { schema: { ...paged, response: CampaignNpaiAnswer } }, async (req) =>
    ok(await pages.campaignNpai(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/messages',
    {
      schema: {
        querystring: MessagesQuery,
        response: MessagesAnswer,
      },
    },
    async (req) => ok(await history.messageHistory(caller(req), req.query)),
  );
  app.get(
    '/messages/mo',
    {
      schema: {
        querystring: RepliesQuery,
        response: RepliesAnswer,
      },
    },
    async (req) => ok(await history.replyHistory(caller(req), req.query)),
  );
}
