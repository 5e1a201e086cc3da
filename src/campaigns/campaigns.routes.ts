import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import type { CampaignsService } from './campaigns.service.ts';

const Message = Type.Object({
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
    message: Message,
    recipients: Type.Object({
      gsm: Type.Array(Type.Object({ value: Type.String(), gsmsmsid: Type.Optional(Type.String()) })),
    }),
  }),
});

/** `sms.lists[]` is the reference service's shape; the seed's `sms.recipients.gsm[]` of list ids also works. */
const SendListsBody = Type.Object({
  sms: Type.Object({
    message: Message,
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

export function campaignsRoutes(app: App, campaigns: CampaignsService): void {
  app.delete('/send/:ticket', { schema: { params: TicketParams } }, async (req) =>
    ok(await campaigns.cancel(caller(req), req.params.ticket)),
  );

  app.get('/campaign/:ticket', { schema: { params: TicketParams } }, async (req) =>
    ok({ campaign: [await campaigns.campaign(caller(req), req.params.ticket)] }),
  );
  app.get('/campaigns', { schema: { querystring: CampaignsQuery } }, async (req) =>
    ok(await campaigns.campaigns(caller(req), req.query)),
  );
  app.get('/campaign/:ticket/mo', { schema: paged }, async (req) =>
    ok(await campaigns.campaignReplies(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get('/campaign/:ticket/blacklist', { schema: paged }, async (req) =>
    ok(await campaigns.campaignStops(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.get('/campaign/:ticket/npai', { schema: paged }, async (req) =>
    ok(await campaigns.campaignNpai(caller(req), req.params.ticket, req.query.start, req.query.length)),
  );
  app.put('/campaign/:ticket/npai', { schema: { params: TicketParams } }, async (req) =>
    ok(await campaigns.blacklistCampaignNpai(caller(req), req.params.ticket)),
  );
  app.get('/messages', { schema: { querystring: MessagesQuery } }, async (req) =>
    ok(await campaigns.messageHistory(caller(req), req.query)),
  );
  app.get('/messages/mo', { schema: { querystring: RepliesQuery } }, async (req) =>
    ok(await campaigns.replyHistory(caller(req), req.query)),
  );

  for (const simulate of [false, true]) {
    const suffix = simulate ? '/simulate' : '';

    app.post(`/send${suffix}`, { schema: { body: SendBody } }, async (req) =>
      ok(await campaigns.send(caller(req), req.body.sms.message, req.body.sms.recipients.gsm, { simulate })),
    );

    app.get(
      `/send${suffix}`,
      { schema: { querystring: SendQuery }, config: { queryToken: true } },
      async (req) => {
        const { to, gsmsmsid, token: _token, ...message } = req.query;
        return ok(await campaigns.send(caller(req), message, [{ value: to, gsmsmsid }], { simulate }));
      },
    );

    app.post(`/send/lists${suffix}`, { schema: { body: SendListsBody } }, async (req) => {
      const { message, lists, recipients } = req.body.sms;
      return ok(
        await campaigns.sendLists(caller(req), message, lists ?? recipients?.gsm ?? [], { simulate }),
      );
    });
  }
}
