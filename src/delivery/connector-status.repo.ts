// SQL of `connector_status`: each delivery process's connectors as it last published them. No rules here.
import type { Executor } from '../store/db.ts';
import type { PublishedStatus } from './connector-status.ts';

export const connectorStatusRepo = {
  /** Writes one row per connector of a process, replacing the ones it wrote before. */
  async save(db: Executor, rows: readonly PublishedStatus[]): Promise<void> {
    if (rows.length === 0) return;
    await db
      .insertInto('connector_status')
      .values(
        rows.map((r) => ({
          name: r.name,
          instance: r.instance,
          role: r.role,
          kind: r.kind,
          binds_up: r.bindsUp,
          binds_total: r.bindsTotal,
          state: r.state,
          window_in_use: r.windowInUse,
          window_size: r.windowSize,
          pps: r.pps,
          last_error: r.lastError,
          last_error_at: r.lastErrorAt,
          updated_at: r.updatedAt,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['name', 'instance']).doUpdateSet((eb) => ({
          role: eb.ref('excluded.role'),
          kind: eb.ref('excluded.kind'),
          binds_up: eb.ref('excluded.binds_up'),
          binds_total: eb.ref('excluded.binds_total'),
          state: eb.ref('excluded.state'),
          window_in_use: eb.ref('excluded.window_in_use'),
          window_size: eb.ref('excluded.window_size'),
          pps: eb.ref('excluded.pps'),
          last_error: eb.ref('excluded.last_error'),
          last_error_at: eb.ref('excluded.last_error_at'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  },

  async removeInstance(db: Executor, instance: string): Promise<void> {
    await db.deleteFrom('connector_status').where('instance', '=', instance).execute();
  },

  async removeOlderThan(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('connector_status').where('updated_at', '<', before).execute();
  },

  /** Every row, by connector name then process: a handful per connector. */
  async list(db: Executor): Promise<PublishedStatus[]> {
    const rows = await db
      .selectFrom('connector_status')
      .selectAll()
      .orderBy('name')
      .orderBy('instance')
      .execute();
    return rows.map((r) => ({
      name: r.name,
      instance: r.instance,
      role: r.role,
      kind: r.kind === 'simulator' ? 'simulator' : 'smpp',
      bindsUp: Number(r.binds_up),
      bindsTotal: Number(r.binds_total),
      state: r.state === 'bound' || r.state === 'connecting' ? r.state : 'down',
      windowInUse: Number(r.window_in_use),
      windowSize: Number(r.window_size),
      pps: Number(r.pps),
      lastError: r.last_error,
      lastErrorAt: r.last_error_at === null ? null : Number(r.last_error_at),
      updatedAt: Number(r.updated_at),
    }));
  },
};
