// Webhook subscriptions: one or more per event type, each with its own signing secret.
import { randomBytes } from 'node:crypto';
import type { AuthContext } from '../accounts/accounts.service.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import type { Db } from '../store/db.ts';
import { type WebhookFields, webhooksRepo } from './webhooks.repo.ts';

export const webhookTypes = ['MO', 'DLR', 'STOP', 'CLICKER', 'BALANCE_ALERT'] as const;
export const webhookStatuses = ['live', 'paused'] as const;
const maxUrlLength = 2048;
const maxSignatureLength = 255;

export interface WebhookInput {
  type?: string;
  url?: string;
  signature?: string;
}

type Row = NonNullable<Awaited<ReturnType<typeof webhooksRepo.find>>>;

const view = (row: Row) => ({
  webhook_id: idOut(row.id),
  type: row.type,
  url: row.url,
  signature: row.signature ?? '',
  status: row.status,
  last_http_code: row.last_http_code === null ? null : String(row.last_http_code),
});

function checkType(type: string): string {
  const upper = type.trim().toUpperCase();
  if (!(webhookTypes as readonly string[]).includes(upper)) {
    throw ApiError.data(`webhook.type "${type}" is not one of: ${webhookTypes.join(', ')}`);
  }
  return upper;
}

function checkUrl(url: string): string {
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

export function createWebhooksService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

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
        url: checkUrl(input.url),
        signature: checkSignature(input.signature),
      };
      // The Standard Webhooks signing key: whsec_ and 24 random bytes in base64.
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      const id = await webhooksRepo.insert(db, auth.accountId, { ...fields, secret }, clock.now());
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
      if (input.url !== undefined) fields.url = checkUrl(input.url);
      if (input.signature !== undefined) fields.signature = checkSignature(input.signature);
      await webhooksRepo.update(db, auth.accountId, row.id, fields, clock.now());
      return view(await get(auth, row.id));
    },

    async setStatus(auth: AuthContext, id: string, status: string) {
      const row = await get(auth, id);
      if (!(webhookStatuses as readonly string[]).includes(status)) {
        throw ApiError.data(`webhook.status must be one of: ${webhookStatuses.join(', ')}`);
      }
      await webhooksRepo.update(db, auth.accountId, row.id, { status }, clock.now());
      return view(await get(auth, row.id));
    },

    async delete(auth: AuthContext, id: string) {
      const row = await get(auth, id);
      await webhooksRepo.delete(db, auth.accountId, row.id);
      return idOut(row.id);
    },
  };
}
