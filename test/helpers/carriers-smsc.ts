// What the carrier tests need of the loopback SMSC (./smsc.ts) besides what it offers: receipts sent when the
// test says, on the connection it picks, instead of right behind each submit_sm_resp.
import type { Session } from 'smpp';
import type { TestSmsc } from './smsc.ts';

/** The SMSC's bound sessions that take deliver_sm (transceivers and receivers), in bind order. */
export function deliverySessions(smsc: TestSmsc): Session[] {
  return [...smsc.roles]
    .filter(([session, role]) => role !== 'transmitter' && smsc.sessions.has(session))
    .map(([session]) => session);
}

/**
 * Sends the text receipt (SMPP 3.4 Appendix B) of the message the SMSC numbered `messageId` on one of its
 * delivery sessions (`session`: which of them, by bind order; the first by default).
 */
export function sendReceipt(
  smsc: TestSmsc,
  receipt: { messageId: string; destination: string; stat: string; err?: string },
  session = 0,
): void {
  const sessions = deliverySessions(smsc);
  const target = sessions[session];
  if (!target) throw new Error(`the SMSC has ${sessions.length} delivery sessions, not a session ${session}`);
  const { messageId, destination, stat, err = '000' } = receipt;
  target.deliver_sm({
    source_addr: destination,
    esm_class: 0x04,
    short_message: `id:${messageId} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:2601051000 done date:2601051000 stat:${stat} err:${err} text:`,
  });
}
