// What the webhooks' routes answer (webhooks.routes.ts): subscriptions, their attempt log and a test
// delivery. The view types are the webhooks service's answers and the console's. Imports nothing but
// typebox, other schema files and the event vocabulary (src/events/event-bodies.ts, which imports nothing).
import Type, { type Static } from 'typebox';
import { eventTypes } from '../events/event-bodies.ts';
import { answer, Id, Nullable, pageTotals, StringEnum, WallTime } from '../http/response-schemas.ts';

export const webhookStatuses = ['live', 'paused'] as const;
/** A webhook's body format: the event's JSON, or its fields as an application/x-www-form-urlencoded form. */
export const bodyFormats = ['json', 'form'] as const;
export type BodyFormat = (typeof bodyFormats)[number];

const webhookFields = {
  webhook_id: Id,
  type: StringEnum(eventTypes),
  url: Type.String(),
  signature: Type.String(),
  format: StringEnum(bodyFormats, {
    description: 'the body sent: json, or form (application/x-www-form-urlencoded)',
  }),
  status: StringEnum(webhookStatuses),
  last_http_code: Nullable(Type.String({ description: 'the last answer of the URL' })),
};

/** A subscription as every webhook route but its creation answers it. */
export const Webhook = Type.Object(webhookFields);
export type WebhookView = Static<typeof Webhook>;

/** A new subscription: with its signing key, shown this once. */
export const CreatedWebhook = Type.Object({
  ...webhookFields,
  secret: Type.String({ description: 'the `whsec_…` signing key, returned on creation only' }),
});
export type CreatedWebhookView = Static<typeof CreatedWebhook>;

/** One attempt of the attempt log (GET /webhook/:id/deliveries). */
export const Attempt = Type.Object({
  attempt_id: Id,
  delivery_id: Id,
  event_type: Type.String(),
  event_id: Nullable({
    ...Id,
    description: 'the event delivered; null for a test delivery, which carries none',
  }),
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
export type AttemptView = Static<typeof Attempt>;

/** The test event queued by POST /webhook/:id/test. */
export const TestDelivery = Type.Object({
  delivery_id: Id,
  webhook_id: Id,
  type: Type.String(),
  body: Type.Record(Type.String(), Type.Unknown(), { description: 'the sample event sent' }),
});
export type TestDeliveryView = Static<typeof TestDelivery>;

export const CreatedWebhookAnswer = answer({ webhook: CreatedWebhook });
export const WebhooksAnswer = answer({ webhooks: Type.Array(Webhook) });
export const WebhookAnswer = answer({ webhook: Webhook });
export const DeletedWebhookAnswer = answer({ deleted_id: Id });
export const AttemptsAnswer = answer({
  deliveries: Type.Array(Attempt),
  totalRecords: pageTotals.totalRecords,
});
export const TestDeliveryAnswer = answer({ test: TestDelivery });
