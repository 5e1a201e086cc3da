// The pump forgets a refused row's wait once it is over, even when the row is never read again (it expired
// unsent): its memory and the size of its reads stay bounded by what is waiting now.
import { expect, it } from 'vitest';
import { createOutboxPump } from './outbox-pump.ts';
import type { SmppOutboxRow } from './smpp-messages.repo.ts';
import type { SmppSession } from './smpp-session.ts';

const row = (id: number): SmppOutboxRow => ({
  id,
  smpp_user_id: 1,
  kind: 'receipt',
  source_addr: '33600000001',
  destination_addr: 'PIGEON',
  text: 'id:1 stat:DELIVRD',
  message_id: '1',
  message_state: 2,
  created_at: 0,
  expires_at: 1_000_000,
});

it("forgets a refused row's wait once it is over, though the row expired and is never read again", async () => {
  let now = 0;
  let waiting: SmppOutboxRow[] = [row(1), row(2), row(3)];
  const limits: number[] = [];
  const inFlight = new Map<number, number>();
  const session = {
    open: true,
    inFlight,
    deliver: (rowId: number) => inFlight.set(rowId, rowId),
  } as unknown as SmppSession;
  const pump = createOutboxPump({
    messages: {
      pending: async (_users, limit) => {
        limits.push(limit);
        return waiting.slice(0, limit);
      },
      delivered: async () => {},
    },
    receivers: () => new Map([[1, [session]]]),
    log: { warn: () => {} },
    pollMs: 60_000,
    now: () => now,
  });
  /** Wakes the pump and waits until its pass has read the outbox and handed the rows out. */
  const pass = async () => {
    const before = limits.length;
    pump.wake();
    while (limits.length === before) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  };
  await pass();
  expect(session.inFlight.size).toBe(3);
  // The receiver refuses all three: they wait, and the pump reads past them meanwhile.
  for (const id of [1, 2, 3]) pump.acknowledged(id, 0x08);
  session.inFlight.clear();
  await pass();
  expect(limits.at(-1)).toBe(10 + 3);
  // They expire unsent: never read again. Once their wait is over, the pump no longer counts them.
  waiting = [];
  now = 6_000;
  await pass();
  expect(limits.at(-1)).toBe(10);
  pump.stop();
});
