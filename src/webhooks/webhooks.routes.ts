import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import {
  AttemptsAnswer,
  CreatedWebhookAnswer,
  DeletedWebhookAnswer,
  TestDeliveryAnswer,
  WebhookAnswer,
  WebhooksAnswer,
} from './webhooks.schemas.ts';
import type { WebhooksService } from './webhooks.service.ts';

const WebhookBody = Type.Object({
  webhook: Type.Object({
    type: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    signature: Type.Optional(Type.String()),
    format: Type.Optional(
      Type.String({
        description:
          'the body sent: json (the default) or form (application/x-www-form-urlencoded, one parameter per field); either is signed the same way',
      }),
    ),
  }),
});
const IdParams = Type.Object({ id: Type.String() });
const StatusBody = Type.Object({ webhook: Type.Object({ status: Type.String() }) });

export function webhooksRoutes(app: App, webhooks: WebhooksService): void {
  app.post('/webhook', { schema: { body: WebhookBody, response: CreatedWebhookAnswer } }, async (req) =>
    ok({ webhook: await webhooks.create(caller(req), req.body.webhook) }),
  );
  app.get('/webhook', { schema: { response: WebhooksAnswer } }, async (req) =>
    ok({ webhooks: await webhooks.list(caller(req)) }),
  );
  app.get('/webhook/:id', { schema: { params: IdParams, response: WebhookAnswer } }, async (req) =>
    ok({ webhook: await webhooks.get(caller(req), req.params.id) }),
  );
  app.put(
    '/webhook/:id',
    { schema: { params: IdParams, body: WebhookBody, response: WebhookAnswer } },
    async (req) => ok({ webhook: await webhooks.update(caller(req), req.params.id, req.body.webhook) }),
  );
  app.put(
    '/webhook/:id/status',
    { schema: { params: IdParams, body: StatusBody, response: WebhookAnswer } },
    async (req) =>
      ok({ webhook: await webhooks.setStatus(caller(req), req.params.id, req.body.webhook.status) }),
  );
  app.delete('/webhook/:id', { schema: { params: IdParams, response: DeletedWebhookAnswer } }, async (req) =>
    ok({ deleted_id: await webhooks.delete(caller(req), req.params.id) }),
  );
  app.get(
    '/webhook/:id/deliveries',
    {
      schema: {
        params: IdParams,
        querystring: PageQuery,
        response: AttemptsAnswer,
      },
    },
    async (req) => ok(await webhooks.deliveries(caller(req), req.params.id, req.query)),
  );
  app.post('/webhook/:id/test', { schema: { params: IdParams, response: TestDeliveryAnswer } }, async (req) =>
    ok({ test: await webhooks.test(caller(req), req.params.id) }),
  );
}
