// What a message reports of itself to the reads: its DLR code (as GET /messages and the campaign page read it)
// and whether it has reached its final outcome.
import { sql } from 'kysely';
import { DlrStatus } from '../sms/dlr-status.ts';

/**
 * The DLR code a message reports: its receipt's, 0 for a cancelled message (never sent), else 1 (sent, no
 * receipt yet: queued, held, being sent or submitted).
 */
export const reportedStatus = (state: string, dlrStatus: number | null): number =>
  state === 'cancelled' ? DlrStatus.notSent : (dlrStatus ?? DlrStatus.sent);

/** `reportedStatus` in SQL, to filter and sort on. */
export const reportedStatusSql = sql<number>`case when ${sql.ref('state')} = 'cancelled' then ${sql.lit(DlrStatus.notSent)} else coalesce(${sql.ref('dlr_status')}, ${sql.lit(DlrStatus.sent)}) end`;

/** The states of a message that has its final outcome. */
export const finalStates: ReadonlySet<string> = new Set(['delivered', 'failed', 'expired']);

/** When a message reached its final outcome (its last update), or null before. */
export const finalAt = (row: { state: string; updated_at: number }): number | null =>
  finalStates.has(row.state) ? Number(row.updated_at) : null;
