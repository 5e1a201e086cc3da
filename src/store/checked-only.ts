// A statement that finds its rows by key (`id in (…)`, or a join on the id) and then checks each row's state
// must not let PostgreSQL's planner reach those rows through the state instead. `messages_due` begins with the
// state, and the queues' partial indexes are defined by it (`webhook_deliveries_leased`: state = 'sending'):
// whenever the table's statistics say a state is rare, as they do when they were taken before a campaign
// began, `state in ('submitted', 'sending')` looks cheaper than a hundred key lookups, and every receipt batch
// read every message in flight, dead index entries included (40 million index entries in one 100,000-message
// campaign, 17,000 per statement). Compared through an expression that no index holds, the state is only a
// filter on the rows the key found. SQLite reads rows by their key first anyway; the expression is the same
// there.
import { type RawBuilder, sql } from 'kysely';

/** `column`, for a comparison that filters rows found by key and must never choose an index of its own. */
export function checkedOnly(column: string): RawBuilder<string> {
  return sql<string>`(${sql.ref(column)} || '')`;
}
