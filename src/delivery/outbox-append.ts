// The outbox's append for delivery's and replies' events, telling the SMPP server (`eventsWritten`) in the same
// transaction, so the receipts and replies of its users' messages are queued with the events that report them.
import type { Executor } from '../store/db.ts';
import { appendEvents as appendToOutbox, type NewEvent } from '../store/outbox.ts';

/**
 * Told, inside the transaction that appends them to the outbox, of the DLR and MO events delivery writes: how
 * the SMPP server (src/smpp-server) queues the receipts and replies of the messages its users sent.
 */
export type EventsWritten = (tx: Executor, events: readonly NewEvent[], now: number) => Promise<void>;

/** The outbox's append, followed in the same transaction by `eventsWritten` (delivery's and replies' events). */
export const appendEventsTelling =
  (eventsWritten: EventsWritten | undefined) =>
  async (tx: Executor, events: readonly NewEvent[], now: number): Promise<void> => {
    if (events.length === 0) return;
    await appendToOutbox(tx, events, now);
    await eventsWritten?.(tx, events, now);
  };
