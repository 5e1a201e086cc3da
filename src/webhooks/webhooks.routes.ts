import Type from 'typebox';
import { eventTypes } from '../events/event-bodies.ts';
import { ok } from '../http/envelope.ts';
import { answer, Id, Nullable, pageTotals, WallTime } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import type { WebhooksService } from './webhooks.service.ts';

const WebhookBody = Type.Object({
  webhook: Type.Object({
    type: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    signature: Type.Optional(Type.String()),
  }),
});
const IdParams = Type.Object({ id: Type.String() });
const StatusBody = Type.Object({ webhook: Type.Object({ status: Type.String() }) });

const webhookFields = {
  webhook_id: Id,
  type: Type.String({ enum: [...eventTypes] }),
  url: Type.String(),
  signature: Type.String(),
  status: Type.String({ enum: ['live', 'paused'] }),
  last_http_code: Nullable(Type.String({ description: 'the last answer of the URL' })),
};
const Webhook = Type.Object(webhookFields);
const CreatedWebhook = Type.Object({
  ...webhookFields,
  secret: Type.String({ description: 'the `whsec_…` signing key, returned on creation only' }),
});
const Attempt = Type.Object({
  attempt_id: Id,
  delivery_id: Id,
  event_type: Type.String(),
  event_id: Id,
  attempt: Type.Integer(),
  http_code: Nullable(Type.String()),
  latency_ms: Type.Number(),
  date: WallTime,
  next_attempt: Nullable({ ...WallTime }),
  error: Nullable(Type.String()),
  request_headers: Nullable(
    Type.Record(Type.String(), Type.String(), { description: 'the headers sent, signatures included' }),
  ),
  request_body: Nullable(Type.String({ description: 'the body sent (its first 8192 characters)' })),
  response_body: Nullable(
    Type.String({ description: "the first 2 KB of the answer's body; null when no answer came" }),
  ),
});
const TestDelivery = Type.Object({
  delivery_id: Id,
  webhook_id: Id,
  type: Type.String(),
  body: Type.Record(Type.String(), Type.Unknown(), { description: 'the sample event sent' }),
});

export function webhooksRoutes(app: App, webhooks: WebhooksService): void {
  app.post(
    '/webhook',
    { schema: { body: WebhookBody, response: answer({ webhook: CreatedWebhook }) } },
    async (req) => ok({ webhook: await webhooks.create(caller(req), req.body.webhook) }),
  );
  app.get('/webhook', { schema: { response: answer({ webhooks: Type.Array(Webhook) }) } }, async (req) =>
    ok({ webhooks: await webhooks.list(caller(req)) }),
  );
  app.get(
    '/webhook/:id',
    { schema: { params: IdParams, response: answer({ webhook: Webhook }) } },
    async (req) => ok({ webhook: await webhooks.get(caller(req), req.params.id) }),
  );
  app.put(
    '/webhook/:id',
    { schema: { params: IdParams, body: WebhookBody, response: answer({ webhook: Webhook }) } },
    async (req) => ok({ webhook: await webhooks.update(caller(req), req.params.id, req.body.webhook) }),
  );
  app.put(
    '/webhook/:id/status',
    { schema: { params: IdParams, body: StatusBody, response: answer({ webhook: Webhook }) } },
    async (req) =>
      ok({ webhook: await webhooks.setStatus(caller(req), req.params.id, req.body.webhook.status) }),
  );
  app.delete(
    '/webhook/:id',
    { schema: { params: IdParams, response: answer({ deleted_id: Id }) } },
    async (req) => ok({ deleted_id: await webhooks.delete(caller(req), req.params.id) }),
  );
  app.get(
    '/webhook/:id/deliveries',
    {
      schema: {
        params: IdParams,
        querystring: PageQuery,
        response: answer({ deliveries: Type.Array(Attempt), totalRecords: pageTotals.totalRecords }),
      },
    },
    async (req) => ok(await webhooks.deliveries(caller(req), req.params.id, req.query)),
  );
  app.post(
    '/webhook/:id/test',
    { schema: { params: IdParams, response: answer({ test: TestDelivery }) } },
    async (req) => ok({ test: await webhooks.test(caller(req), req.params.id) }),
  );
}
