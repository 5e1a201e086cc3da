// The event outbox: every DLR, MO, STOP, CLICKER and BALANCE_ALERT is appended here in the same transaction
// as the change it reports (its body built by `src/events/event-bodies.ts`); the webhook dispatcher turns rows
// into deliveries. One writer for every capability.
import type { Selectable } from 'kysely';
import type { EventType } from '../events/event-bodies.ts';
import { insertRows } from './bulk-insert.ts';
import type { Executor } from './db.ts';
import type { EventsTable } from './schema.ts';

export type NewEvent = Pick<Selectable<EventsTable>, 'account_id' | 'campaign_id' | 'payload'> & {
  type: EventType;
};

const columns = ['account_id', 'campaign_id', 'type', 'payload', 'created_at'] as const;
const batchRows = 500;

export async function appendEvents(db: Executor, events: readonly NewEvent[], now: number): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => [e.account_id, e.campaign_id, e.type, e.payload, now]);
  await insertRows(db, 'events', columns, rows, batchRows);
}
