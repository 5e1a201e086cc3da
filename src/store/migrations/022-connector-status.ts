import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * What each delivery process says of its connectors (issue 13), for `pigeon connectors`, which runs in a
 * process of its own: one row per connector and process (`instance`: host name and process id), rewritten
 * every two seconds and when a bind goes up or down, removed when the process stops. A row not rewritten
 * for a few seconds belongs to a process that stopped answering: the command shows it as stale.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('connector_status')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('instance', 'text', (c) => c.notNull())
    // The process's ROLE (all, worker, delivery), for an operator telling processes apart.
    .addColumn('role', 'text', (c) => c.notNull())
    // smpp or simulator.
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('binds_up', 'integer', (c) => c.notNull())
    .addColumn('binds_total', 'integer', (c) => c.notNull())
    // bound, connecting or down.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('window_in_use', 'integer', (c) => c.notNull())
    .addColumn('window_size', 'integer', (c) => c.notNull())
    // Parts accepted per second over the last ten seconds.
    .addColumn('pps', postgres ? 'double precision' : 'real', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('connector_status_pk', ['name', 'instance'])
    .execute();
}
