import { type ColumnBuilderCallback, type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/** Balance alerts: the once-per-crossing flag of each setting, and the outbox of alert e-mails and SMS. */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  // 1 while the next debit that takes the credits to or below the trigger must alert. The debit that alerts
  // sets it to 0 in its own transaction; credits rising above the trigger, or a new trigger, set it back.
  await db.schema
    .alterTable('balance_notifications')
    .addColumn('armed', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();

  // One row per e-mail or SMS an alert owes, written in the debit's transaction and consumed by the alert
  // worker. state: pending (due at next_attempt_at), sending (leased until lease_until), sent, failed.
  await db.schema
    .createTable('alert_jobs')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    // email or sms.
    .addColumn('kind', 'text', notNull)
    // The e-mail address or the phone number, as the setting had it when the alert fired.
    .addColumn('recipient', 'text', notNull)
    // The alert: balance, trigger and date, as JSON.
    .addColumn('payload', 'text', notNull)
    .addColumn('state', 'text', notNull)
    .addColumn('attempts', 'integer', notNull)
    .addColumn('next_attempt_at', 'bigint', notNull)
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  // Partial indexes keep the claim and the lease sweep off the finished rows.
  await db.schema
    .createIndex('alert_jobs_due')
    .on('alert_jobs')
    .column('next_attempt_at')
    .where(sql.ref('state'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('alert_jobs_leased')
    .on('alert_jobs')
    .column('lease_until')
    .where(sql.ref('state'), '=', sql.lit('sending'))
    .execute();
  await db.schema.createIndex('alert_jobs_account').on('alert_jobs').columns(['account_id', 'id']).execute();
}
