// The SMSC of the pipeline bench, in its own process: the `smpp` package's server on 127.0.0.1 (port 0),
// which answers every submit_sm at once with a decimal message id and sends its delivery receipt (text
// and TLVs, as SMPP 3.4 Appendix B and most SMSCs do) on the same transceiver session. Both gateways bind
// as transceivers, so that is the only bind it accepts. It counts what it sees and answers the
// orchestrator's `stats` and `reset` over IPC.
import type { AddressInfo } from 'node:net';
import smpp, { type Pdu, type Session } from 'smpp';
import { answerRequests, sayReady } from './ipc.ts';

export interface SmscStats {
  /** Transceiver sessions bound right now. */
  bound: number;
  submits: number;
  /** submit_sm that asked for no receipt (neither gateway should send one). */
  withoutReceipt: number;
  receiptsSent: number;
  /** deliver_sm_resp the gateway sent back for the receipts. */
  receiptsAnswered: number;
  firstSubmitMs: number;
  lastSubmitMs: number;
  sessionErrors: number;
}

/** The counters of a round, all zero. */
const zeroCounts = () => ({
  submits: 0,
  withoutReceipt: 0,
  receiptsSent: 0,
  receiptsAnswered: 0,
  firstSubmitMs: 0,
  lastSubmitMs: 0,
  sessionErrors: 0,
});
const stats: SmscStats = { bound: 0, ...zeroCounts() };
let nextId = 1_000_000_000;

const two = (n: number) => String(n).padStart(2, '0');
/** YYMMDDhhmm, the date format of receipts. */
const receiptDate = (d: Date) =>
  two(d.getUTCFullYear() % 100) +
  two(d.getUTCMonth() + 1) +
  two(d.getUTCDate()) +
  two(d.getUTCHours()) +
  two(d.getUTCMinutes());

function receipt(pdu: Pdu, id: string, submitted: Date): Record<string, unknown> {
  const date = receiptDate(submitted);
  const text = `id:${id} sub:001 dlvrd:001 submit date:${date} done date:${receiptDate(new Date())} stat:DELIVRD err:000 text:`;
  return {
    source_addr_ton: pdu.dest_addr_ton,
    source_addr_npi: pdu.dest_addr_npi,
    source_addr: pdu.destination_addr,
    dest_addr_ton: pdu.source_addr_ton,
    dest_addr_npi: pdu.source_addr_npi,
    destination_addr: pdu.source_addr,
    esm_class: 0x04,
    // A Buffer with data_coding set: the package would otherwise pick a coding for a string by itself.
    data_coding: 0,
    short_message: Buffer.from(text, 'latin1'),
    receipted_message_id: id,
    message_state: 2,
  };
}

function onSubmit(session: Session, pdu: Pdu): void {
  const now = Date.now();
  stats.submits++;
  if (stats.firstSubmitMs === 0) stats.firstSubmitMs = now;
  stats.lastSubmitMs = now;
  const id = String(nextId++);
  session.send(pdu.response({ message_id: id }));
  if ((Number(pdu.registered_delivery) & 0x03) === 0) {
    stats.withoutReceipt++;
    return;
  }
  stats.receiptsSent++;
  session.deliver_sm(receipt(pdu, id, new Date(now)), () => {
    stats.receiptsAnswered++;
  });
}

const server = smpp.createServer((session: Session) => {
  const socket = session.socket;
  socket.setNoDelay(true);
  // The answers to one burst of PDUs leave in one write: the socket is corked while the package reads the
  // burst (its 'readable' handler runs after this one) and uncorked on the next tick. Without it each PDU
  // is its own system call and the simulator, not the gateway, would set the pace.
  socket.prependListener('readable', () => {
    if (socket.writableCorked === 0) {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }
  });
  let bound = false;
  session.on('bind_transceiver', (pdu: Pdu) => {
    session.send(pdu.response({ system_id: 'BENCHSMSC' }));
    bound = true;
    stats.bound++;
  });
  const refuse = (pdu: Pdu) => {
    session.send(pdu.response({ command_status: smpp.ESME_RBINDFAIL }));
    session.close();
  };
  session.on('bind_transmitter', refuse);
  session.on('bind_receiver', refuse);
  session.on('submit_sm', (pdu: Pdu) => onSubmit(session, pdu));
  session.on('enquire_link', (pdu: Pdu) => session.send(pdu.response()));
  session.on('unbind', (pdu: Pdu) => {
    session.send(pdu.response());
    session.close();
  });
  session.on('error', () => {
    stats.sessionErrors++;
  });
  session.on('close', () => {
    if (bound) stats.bound--;
    bound = false;
  });
});

answerRequests({
  stats: () => stats,
  // A reset starts a round: the sessions bound stay what they are.
  reset: () => Object.assign(stats, zeroCounts()),
});

server.listen(0, '127.0.0.1', () => sayReady((server.address() as AddressInfo).port));
