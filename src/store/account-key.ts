// How a statement names an account where `account_id` must not choose the plan: the expression of the indexes of
// migration 013, which the history reads (src/reads) and the purges of delivery go through.
import { sql } from 'kysely';

/**
 * `account_id + 0`. The history reads find the account's rows through the indexes keyed on this expression
 * (migration 013): it is what selects them, so no other query's plan ever takes them. Rows given by id are
 * checked against it too: compared plainly, `account_id` can make SQLite's planner (which keeps no
 * statistics) prefer an index on the account, and walk all of its rows.
 */
export const accountKey = sql<number>`${sql.ref('account_id')} + 0`;
