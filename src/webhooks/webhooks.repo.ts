import type { Selectable } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { WebhooksTable } from '../store/schema.ts';

export type WebhookFields = Pick<Selectable<WebhooksTable>, 'type' | 'url' | 'signature' | 'format'>;

const columns = [
  'id',
  'type',
  'url',
  'signature',
  'format',
  'status',
  'last_http_code',
  'created_at',
] as const;

export const webhooksRepo = {
  async insert(db: Executor, accountId: number, fields: WebhookFields & { secret: string }, now: number) {
    const row = await db
      .insertInto('webhooks')
      .values({
        account_id: accountId,
        ...fields,
        status: 'live',
        last_http_code: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  },

  list(db: Executor, accountId: number) {
    return db
      .selectFrom('webhooks')
      .select(columns)
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
  },

  find(db: Executor, accountId: number, id: number) {
    return db
      .selectFrom('webhooks')
      .select(columns)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async update(
    db: Executor,
    accountId: number,
    id: number,
    fields: Partial<WebhookFields & { status: string; failing_since: number | null }>,
    now: number,
  ) {
    const result = await db
      .updateTable('webhooks')
      .set({ ...fields, updated_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  async delete(db: Executor, accountId: number, id: number) {
    const result = await db
      .deleteFrom('webhooks')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },
};
