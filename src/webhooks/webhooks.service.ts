// Webhook subscriptions: one or more per event type, each with its own signing secret; their attempt log
// and test deliveries.
import { randomBytes } from 'node:crypto';
import { type EventType, eventTypes, isEventType } from '../events/event-bodies.ts';
import { type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import type { Erasure } from '../shared/erasure.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { parsePage } from '../shared/paging.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { checkFormat } from './body-format.ts';
import { testEventPayload } from './test-event.ts';
import type { UrlGuard } from './url-guard.ts';
import { webhookDeliveriesRepo } from './webhook-deliveries.repo.ts';
import { webhookLifecycleRepo } from './webhook-lifecycle.repo.ts';
import { type WebhookFields, webhooksRepo } from './webhooks.repo.ts';
import {
  type AttemptView,
  type BodyFormat,
  type TestDeliveryView,
  type WebhookView,
  webhookStatuses,
} from './webhooks.schemas.ts';

const maxUrlLength = 2048;
const maxSignatureLength = 255;

export interface WebhookInput {
  type?: string;
  url?: string;
  signature?: string;
  format?: string;
}

type Row = NonNullable<Awaited<ReturnType<typeof webhooksRepo.find>>>;

// The type and status are stored as text, and only after checkType and the status check: read back, they
// are one of the schema's values.
const view = (row: Row): WebhookView => ({
  webhook_id: idOut(row.id),
  type: row.type as EventType,
  url: row.url,
  signature: row.signature ?? '',
  format: row.format as BodyFormat,
  status: row.status as WebhookView['status'],
  last_http_code: row.last_http_code === null ? null : String(row.last_http_code),
});

function checkType(type: string): string {
  const upper = type.trim().toUpperCase();
  if (!isEventType(upper)) {
    throw ApiError.data(`webhook.type "${type}" is not one of: ${eventTypes.join(', ')}`);
  }
  return upper;
}

function checkUrlShape(url: string): string {
  const trimmed = url.trim();
  if (trimmed.length > maxUrlLength)
    throw ApiError.data(`webhook.url is longer than ${maxUrlLength} characters`);
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw ApiError.data(`webhook.url "${url}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw ApiError.data(`webhook.url must be http or https, not ${parsed.protocol.replace(':', '')}`);
  }
  return trimmed;
}

function checkSignature(signature: string | undefined): string | null {
  if (signature === undefined || signature === '') return null;
  if (signature.length > maxSignatureLength) {
    throw ApiError.data(`webhook.signature is longer than ${maxSignatureLength} characters`);
  }
  return signature;
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

export function createWebhooksService(deps: {
  db: Db;
  clock: Clock;
  urlGuard: UrlGuard;
  timezone: string;
  /** The audit log: every change of a webhook (and a test queued), in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, urlGuard, timezone, audit } = deps;
  const entry = (auth: AuthContext, action: string, webhookId: number) => ({
    accountId: auth.accountId,
    auth,
    action,
    objectType: 'webhook',
    objectId: webhookId,
  });

  const dates = zonedTime(timezone);

  /** The URL's shape, then its target: private and other non-public addresses are refused. */
  async function checkUrl(url: string): Promise<string> {
    const trimmed = checkUrlShape(url);
    const refusal = await urlGuard.check(trimmed);
    if (refusal) throw ApiError.data(`webhook.url ${refusal}`);
    return trimmed;
  }

  async function get(auth: AuthContext, rawId: string | number): Promise<Row> {
    const id = idIn(rawId);
    const row = id === undefined ? undefined : await webhooksRepo.find(db, auth.accountId, id);
    if (!row) throw ApiError.notFound(`webhook "${rawId}" not found`);
    return row;
  }

  return {
    async create(auth: AuthContext, input: WebhookInput) {
      if (input.type === undefined) throw ApiError.data('webhook.type is required');
      if (input.url === undefined) throw ApiError.data('webhook.url is required');
      const fields: WebhookFields = {
        type: checkType(input.type),
        url: await checkUrl(input.url),
        signature: checkSignature(input.signature),
        format: input.format === undefined ? 'json' : checkFormat(input.format),
      };
      // The Standard Webhooks signing key: whsec_ and 24 random bytes in base64.
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      const id = await withEntry(
        db,
        audit,
        (created: number) => entry(auth, 'webhook.create', created),
        (tx) => webhooksRepo.insert(tx, auth.accountId, { ...fields, secret }, clock.now()),
      );
      return { ...view(await get(auth, id)), secret };
    },

    async list(auth: AuthContext) {
      return (await webhooksRepo.list(db, auth.accountId)).map(view);
    },

    async get(auth: AuthContext, id: string) {
      return view(await get(auth, id));
    },

    async update(auth: AuthContext, id: string, input: WebhookInput) {
      const row = await get(auth, id);
      const fields: Partial<WebhookFields> = {};
      if (input.type !== undefined) fields.type = checkType(input.type);
      if (input.url !== undefined) fields.url = await checkUrl(input.url);
      if (input.signature !== undefined) fields.signature = checkSignature(input.signature);
      if (input.format !== undefined) fields.format = checkFormat(input.format);
      await withEntry(db, audit, entry(auth, 'webhook.update', row.id), (tx) =>
        webhooksRepo.update(tx, auth.accountId, row.id, fields, clock.now()),
      );
      return view(await get(auth, row.id));
    },

    /**
     * Pausing holds the webhook's pending deliveries (nothing is sent to a paused webhook); setting it live
     * again makes them due at once and starts its "no success since" clock afresh.
     */
    async setStatus(auth: AuthContext, id: string, status: string) {
      const row = await get(auth, id);
      if (!(webhookStatuses as readonly string[]).includes(status)) {
        throw ApiError.data(`webhook.status must be one of: ${webhookStatuses.join(', ')}`);
      }
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        if (status === 'live') {
          await webhooksRepo.update(tx, auth.accountId, row.id, { status, failing_since: null }, now);
          await webhookDeliveriesRepo.resumeHeld(tx, row.id, now);
        } else {
          await webhooksRepo.update(tx, auth.accountId, row.id, { status }, now);
          await webhookDeliveriesRepo.holdPending(tx, [row.id], now);
        }
        await audit.record(tx, entry(auth, status === 'live' ? 'webhook.resume' : 'webhook.pause', row.id));
      });
      return view(await get(auth, row.id));
    },

    async delete(auth: AuthContext, id: string) {
      const row = await get(auth, id);
      await db.transaction().execute(async (tx) => {
        await webhookDeliveriesRepo.deleteForWebhook(tx, row.id);
        await webhooksRepo.delete(tx, auth.accountId, row.id);
        await audit.record(tx, entry(auth, 'webhook.delete', row.id));
      });
      return idOut(row.id);
    },

    /** The webhook's attempt log, newest first. */
    async deliveries(auth: AuthContext, id: string, query: { start?: string; length?: string }) {
      const row = await get(auth, id);
      const { start, length } = parsePage(query);
      const [attempts, total] = await Promise.all([
        webhookDeliveriesRepo.attempts(db, auth.accountId, row.id, start, length),
        webhookDeliveriesRepo.countAttempts(db, auth.accountId, row.id),
      ]);
      return {
        deliveries: attempts.map(
          (a): AttemptView => ({
            attempt_id: idOut(a.id),
            delivery_id: idOut(a.delivery_id),
            event_type: a.event_type,
            // Null for a test delivery, which carries no event (the schema's id pattern has no empty id).
            event_id: a.event_id === null ? null : idOut(a.event_id),
            attempt: a.attempt,
            http_code: a.http_code === null ? null : String(a.http_code),
            latency_ms: a.latency_ms,
            date: dates.isoInstant(a.attempted_at),
            next_attempt: a.next_attempt_at === null ? null : dates.isoInstant(a.next_attempt_at),
            error: a.error,
            // What was exchanged; null on attempts logged before Pigeon kept it.
            request_headers:
              a.request_headers === null ? null : (JSON.parse(a.request_headers) as Record<string, string>),
            request_body: a.request_body,
            response_body: a.response_body,
          }),
        ),
        totalRecords: total,
      };
    },

    /** Queues a test event (the webhook's type, sample values) for the dispatcher, like any delivery. */
    async test(auth: AuthContext, id: string): Promise<TestDeliveryView> {
      const row = await get(auth, id);
      if (row.status !== 'live') {
        throw ApiError.data(`webhook ${idOut(row.id)} is paused; set it live to send it a test`);
      }
      const now = clock.now();
      const payload = testEventPayload(row.type, auth.accountId, now, dates);
      const deliveryId = await withEntry(db, audit, entry(auth, 'webhook.test', row.id), (tx) =>
        webhookDeliveriesRepo.insertTest(
          tx,
          { webhook_id: row.id, account_id: auth.accountId, event_type: row.type, payload },
          now,
        ),
      );
      const body = JSON.parse(payload) as Record<string, unknown>;
      return { delivery_id: idOut(deliveryId), webhook_id: idOut(row.id), type: row.type, body };
    },

    /** Pruning: up to `limit` attempt log rows older than `before`, in one statement; how many went. */
    pruneAttempts(before: number, limit: number): Promise<number> {
      return webhookLifecycleRepo.pruneAttempts(db, before, limit);
    },

    /** Pruning: up to `limit` deliveries finished (delivered or failed) before `before`; how many went. */
    pruneFinishedDeliveries(before: number, limit: number): Promise<number> {
      return webhookLifecycleRepo.pruneFinishedDeliveries(db, before, limit);
    },

    /**
     * Pruning: up to `limit` events written before `before` whose deliveries are all finished; never one still
     * to fan out, nor one a delivery still needs (pending, being sent, or held for a paused webhook).
     */
    pruneDeliveredEvents(before: number, limit: number): Promise<number> {
      return webhookLifecycleRepo.pruneDeliveredEvents(db, before, limit);
    },

    /** Erasure, in the caller's transaction: the events about the number, their deliveries and attempts. */
    eraseNumber(tx: Executor, erasure: Erasure) {
      return webhookLifecycleRepo.eraseNumber(tx, erasure);
    },
  };
}
