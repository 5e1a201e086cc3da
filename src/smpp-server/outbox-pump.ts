// Sends the outbox (receipts and replies waiting in `smpp_outbox`) as deliver_sm to the receiver and
// transceiver binds of this process, and deletes each row once its deliver_sm_resp says 0. Woken by the
// `events` nudge (the delivery worker recorded receipts or replies), by a new receiving bind, and by a poll
// while any receiving bind is up; rows refused or left unanswered by a closed bind are offered again later.
import { encodeGsm7, encodeUcs2, encodingOf } from '../sms/segments.ts';
import { encodeDeliverSm } from './pdu.ts';
import type { SmppOutboxRow } from './smpp-messages.repo.ts';
import type { SmppMessagesService } from './smpp-messages.service.ts';
import type { SmppSession } from './smpp-session.ts';

/** deliver_sm in flight per bind, unanswered. */
const windowPerBind = 10;
const batchRows = 500;
/** A row a bind refused (or left unanswered) waits this long before it is offered again. */
const retryMs = 5_000;

export function deliverSmOf(row: SmppOutboxRow) {
  const gsm = encodingOf(row.text) === 'gsm7';
  const text = Buffer.from(gsm ? encodeGsm7(row.text) : encodeUcs2(row.text));
  return (sequence: number) =>
    encodeDeliverSm(sequence, {
      source: row.source_addr,
      destination: row.destination_addr,
      esmClass: row.kind === 'receipt' ? 0x04 : 0x00,
      dataCoding: gsm ? 0 : 8,
      text,
      receiptedMessageId: row.message_id ?? undefined,
      messageState: row.message_state ?? undefined,
    });
}

export function createOutboxPump(deps: {
  messages: Pick<SmppMessagesService, 'pending' | 'delivered'>;
  /** The receiving binds of this process, by SMPP user id. */
  receivers: () => Map<number, SmppSession[]>;
  log: { warn(fields: object, message: string): void };
  pollMs: number;
  now: () => number;
}) {
  /** Rows sent and not yet answered, or answered and not yet deleted: never sent twice meanwhile. */
  const busy = new Set<number>();
  const notBefore = new Map<number, number>();
  let acked: number[] = [];
  let running = false;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  async function pass(): Promise<void> {
    const receivers = deps.receivers();
    if (receivers.size === 0) return;
    // Read no more than the binds can take now, past the rows in flight (listed until deleted) and those put off:
    // with a backlog, reading a full batch at each pass for a few free places cost more than sending them.
    let free = 0;
    for (const sessions of receivers.values()) {
      for (const s of sessions) if (s.open) free += Math.max(0, windowPerBind - s.inFlight.size);
    }
    if (free === 0) return;
    // A wait that is over is forgotten, read or not: a row that expired unsent is never read again, and
    // would otherwise stay in the map (and in the read's size) until the process stops.
    const before = deps.now();
    for (const [id, at] of notBefore) if (at <= before) notBefore.delete(id);
    const rows = await deps.messages.pending(
      [...receivers.keys()],
      Math.min(batchRows, free) + busy.size + notBefore.size,
    );
    const now = deps.now();
    const turn = new Map<number, number>();
    for (const row of rows) {
      const id = Number(row.id);
      if (busy.has(id) || (notBefore.get(id) ?? 0) > now) continue;
      notBefore.delete(id);
      const sessions = receivers.get(Number(row.smpp_user_id)) ?? [];
      // Round robin over the user's binds with room in their window.
      const start = turn.get(Number(row.smpp_user_id)) ?? 0;
      let chosen: SmppSession | undefined;
      for (let i = 0; i < sessions.length; i++) {
        const s = sessions[(start + i) % sessions.length];
        if (s.open && s.inFlight.size < windowPerBind) {
          chosen = s;
          turn.set(Number(row.smpp_user_id), start + i + 1);
          break;
        }
      }
      if (!chosen) continue;
      busy.add(id);
      chosen.deliver(id, deliverSmOf(row));
    }
  }

  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    void (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (error) {
          deps.log.warn({ err: (error as Error).message }, 'SMPP server: reading the outbox failed');
        }
      } while (again && !stopped);
      running = false;
    })();
  }

  async function flushAcked(): Promise<void> {
    const ids = acked;
    acked = [];
    try {
      await deps.messages.delivered(ids);
    } catch (error) {
      deps.log.warn({ err: (error as Error).message }, 'SMPP server: deleting delivered rows failed');
    }
    for (const id of ids) busy.delete(id);
    wake();
  }

  return {
    wake,
    start(): void {
      timer = setInterval(wake, deps.pollMs);
      timer.unref();
    },
    /** A deliver_sm_resp (or generic_nack) for outbox row `rowId`. */
    acknowledged(rowId: number, status: number): void {
      if (status !== 0) {
        busy.delete(rowId);
        notBefore.set(rowId, deps.now() + retryMs);
        return;
      }
      acked.push(rowId);
      if (acked.length === 1) setImmediate(() => void flushAcked());
    },
    /** A bind closed with deliver_sm unanswered: those rows are offered again. */
    released(session: SmppSession): void {
      for (const rowId of session.inFlight.values()) busy.delete(rowId);
      session.inFlight.clear();
    },
    stop(): void {
      stopped = true;
      if (timer) clearInterval(timer);
    },
  };
}
