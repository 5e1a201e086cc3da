import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { CampaignResultAnswer, CancelAnswer } from './campaigns.schemas.ts';
import type { CampaignsService } from './campaigns.service.ts';
import type { SendingService } from './sending.service.ts';

const MessageBody = Type.Object({
  text: Type.String(),
  pushtype: Type.Optional(Type.String()),
  links: Type.Optional(Type.Array(Type.String())),
  delay: Type.Optional(Type.String()),
  sender: Type.Optional(Type.String()),
  unicode: Type.Optional(Type.Unknown()),
});

const SendBody = Type.Object({
  sms: Type.Object({
    message: MessageBody,
    recipients: Type.Object({
      gsm: Type.Array(Type.Object({ value: Type.String(), gsmsmsid: Type.Optional(Type.String()) })),
    }),
  }),
});

/** A list of a list campaign; `gsmsmsid` is declared so the API says it is refused here (POST /send only). */
const ListItem = Type.Object({
  value: Type.String(),
  gsmsmsid: Type.Optional(
    Type.Unknown({ description: 'refused with -7: gsmsmsid applies to POST /send only, one per number' }),
  ),
});

/** `sms.lists[]` is the reference service's shape; the seed's `sms.recipients.gsm[]` of list ids also works. */
const SendListsBody = Type.Object({
  sms: Type.Object({
    message: MessageBody,
    lists: Type.Optional(Type.Array(ListItem)),
    recipients: Type.Optional(Type.Object({ gsm: Type.Optional(Type.Array(ListItem)) })),
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

export function campaignsRoutes(
  app: App,
  services: { sending: SendingService; campaigns: CampaignsService },
): void {
  const { sending, campaigns } = services;
  app.delete('/send/:ticket', { schema: { params: TicketParams, response: CancelAnswer } }, async (req) =>
    ok(await campaigns.cancel(caller(req), req.params.ticket)),
  );

  for (const simulate of [false, true]) {
    const suffix = simulate ? '/simulate' : '';
    // A simulation stores nothing and charges nothing: it has no Idempotency-Key to honour.
    const headers = simulate ? {} : { headers: SendHeaders };

    app.post(
      `/send${suffix}`,
      { schema: { ...headers, body: SendBody, response: CampaignResultAnswer } },
      async (req) =>
        ok(
          await sending.send(caller(req), req.body.sms.message, req.body.sms.recipients.gsm, {
            simulate,
            idempotency: keyOf(req),
          }),
        ),
    );

    app.get(
      `/send${suffix}`,
      {
        schema: { ...headers, querystring: SendQuery, response: CampaignResultAnswer },
        config: { queryToken: true },
      },
      async (req) => {
        const { to, gsmsmsid, token: _token, ...message } = req.query;
        return ok(
          await sending.send(caller(req), message, [{ value: to, gsmsmsid }], {
            simulate,
            idempotency: keyOf(req),
          }),
        );
      },
    );

    app.post(
      `/send/lists${suffix}`,
      { schema: { ...headers, body: SendListsBody, response: CampaignResultAnswer } },
      async (req) => {
        const { message, lists, recipients } = req.body.sms;
        return ok(
          await sending.sendLists(caller(req), message, lists ?? recipients?.gsm ?? [], {
            simulate,
            idempotency: keyOf(req),
          }),
        );
      },
    );
  }
}
