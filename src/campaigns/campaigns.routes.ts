import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Id, Nullable, pageTotals, WallTime } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import type { CampaignsService } from './campaigns.service.ts';

const MessageBody = Type.Object({
  text: Type.String(),
  pushtype: Type.Optional(Type.String()),
  links: Type.Optional(Type.Array(Type.String())),
  delay: Type.Optional(Type.String()),
  sender: Type.Optional(Type.String()),
  unicode: Type.Optional(Type.Unknown()),
});
const ValueItem = Type.Object({ value: Type.String() });

const SendBody = Type.Object({
  sms: Type.Object({
    message: MessageBody,
    recipients: Type.Object({
      gsm: Type.Array(Type.Object({ value: Type.String(), gsmsmsid: Type.Optional(Type.String()) })),
    }),
  }),
});

/** `sms.lists[]` is the reference service's shape; the seed's `sms.recipients.gsm[]` of list ids also works. */
const SendListsBody = Type.Object({
  sms: Type.Object({
    message: MessageBody,
    lists: Type.Optional(Type.Array(ValueItem)),
    recipients: Type.Optional(Type.Object({ gsm: Type.Optional(Type.Array(ValueItem)) })),
  }),
});

const SendQuery = Type.Object({
  text: Type.String(),
  to: Type.String(),
  pushtype: Type.Optional(Type.String()),
  delay: Type.Optional(Type.String()),
  sender: Type.Optional(Type.String()),
  gsmsmsid: Type.Optional(Type.String()),
  unicode: Type.Optional(Type.String()),
  links: Type.Optional(Type.Array(Type.String())),
  token: Type.Optional(Type.String()),
});

/** Declared on the real sends so the API documents it; the idempotency service checks its value. */
const SendHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'makes the send safe to retry: 1 to 255 printable ASCII characters (a UUID, say). The same key with the same request within 24 h answers the first answer again without sending or charging; with another request, -7; while the first is still running, the retry waits for its answer (HTTP 409 after 30 s)',
    }),
  ),
});
/** What a send's Idempotency-Key is checked against: its header, and the route it came to. */
const keyOf = (req: FastifyRequest) => ({
  key: req.headers['idempotency-key'],
  route: `${req.method} ${req.routeOptions.url}`,
});

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
/** What a send answers; a simulation has no `ticket`. */
const CampaignResult = answer({
  ticket: Type.Optional({ ...Id, description: 'the campaign id (absent from a simulation)' }),
  cost: Type.Integer({ description: 'credits charged' }),
  credits: Type.Integer({ description: 'the balance after the send' }),
  total: Type.Integer({ description: 'recipients given' }),
  sent: Type.Integer({ description: 'recipients left after filtering' }),
  blacklisted: count,
  duplicated: count,
  invalid: count,
  npai: count,
  not_allowed: Type.Integer({ description: 'recipients in a country the configuration does not allow' }),
});
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

export function campaignsRoutes(app: App, campaigns: CampaignsService): void {
  app.delete(
    '/send/:ticket',
    { schema: { params: TicketParams, response: answer({ credits: Type.Integer() }) } },
    async (req) => ok(await campaigns.cancel(caller(req), req.params.ticket)),
  );

  app.get(
    '/campaign/:ticket',
    { schema: { params: TicketParams, response: answer({ campaign: Type.Array(Campaign) }) } },
    async (req) => ok({ campaign: [await campaigns.campaign(caller(req), req.params.ticket)] }),
  );
  app.get(
    '/campaigns',
    {
      schema: {
        querystring: CampaignsQuery,
        response: answer({ campaigns: Type.Array(Campaign), ...pageTotals }),
      },
    },
    async (req) => ok(await campaigns.campaigns(caller(req), req.query)),
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
    async (req) => ok(await campaigns.campaignMessages(caller(req), req.params.ticket, req.query)),
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
    async (req) => ok(await campaigns.campaignClicks(caller(req), req.params.ticket, req.query)),
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
      ok(await campaigns.campaignReplies(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/campaign/:ticket/blacklist',
    { schema: { ...paged, response: answer({ stops: Type.Array(NumberOfCampaign), ...pageTotals }) } },
    async (req) =>
      ok(await campaigns.campaignStops(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/campaign/:ticket/npai',
    { schema: { ...paged, response: answer({ npais: Type.Array(NumberOfCampaign), ...pageTotals }) } },
    async (req) =>
      ok(await campaigns.campaignNpai(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get(
    '/messages',
    {
      schema: {
        querystring: MessagesQuery,
        response: answer({ messages: Type.Array(HistoryMessage), ...pageTotals }),
      },
    },
    async (req) => ok(await campaigns.messageHistory(caller(req), req.query)),
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
    async (req) => ok(await campaigns.replyHistory(caller(req), req.query)),
  );

  for (const simulate of [false, true]) {
    const suffix = simulate ? '/simulate' : '';
    // A simulation stores nothing and charges nothing: it has no Idempotency-Key to honour.
    const headers = simulate ? {} : { headers: SendHeaders };

    app.post(
      `/send${suffix}`,
      { schema: { ...headers, body: SendBody, response: CampaignResult } },
      async (req) =>
        ok(
          await campaigns.send(caller(req), req.body.sms.message, req.body.sms.recipients.gsm, {
            simulate,
            idempotency: keyOf(req),
          }),
        ),
    );

    app.get(
      `/send${suffix}`,
      {
        schema: { ...headers, querystring: SendQuery, response: CampaignResult },
        config: { queryToken: true },
      },
      async (req) => {
        const { to, gsmsmsid, token: _token, ...message } = req.query;
        return ok(
          await campaigns.send(caller(req), message, [{ value: to, gsmsmsid }], {
            simulate,
            idempotency: keyOf(req),
          }),
        );
      },
    );

    app.post(
      `/send/lists${suffix}`,
      { schema: { ...headers, body: SendListsBody, response: CampaignResult } },
      async (req) => {
        const { message, lists, recipients } = req.body.sms;
        return ok(
          await campaigns.sendLists(caller(req), message, lists ?? recipients?.gsm ?? [], {
            simulate,
            idempotency: keyOf(req),
          }),
        );
      },
    );
  }
}
