// A loopback SMSC on the `smpp` package's server, controllable from tests: credentials, throttling, held
// responses (to watch the window), receipts in text or TLV form with hex or decimal ids, MO injection,
// and dropping every connection. It accepts transceiver, transmitter and receiver binds, and TLS (ssmpp://)
// with the key and certificate given.
import type { AddressInfo } from 'node:net';
import smpp, { type Pdu, type Session } from 'smpp';
import type { SmppOptions } from '../../src/delivery/smpp/smpp-transport.ts';

export interface SubmittedPdu {
  destination: string;
  destTon: number;
  destNpi: number;
  source: string;
  sourceTon: number;
  sourceNpi: number;
  esmClass: number;
  dataCoding: number;
  udh: Buffer | undefined;
  payload: Buffer;
  messageId: string;
  /** The client port of the connection that carried it (tells processes apart). */
  clientPort: number;
}

export interface SmscOptions {
  systemId?: string;
  password?: string;
  /** How receipts are sent: the text, the TLVs, or none. */
  receipts?: 'text' | 'tlv' | 'none';
  /** Ids in submit_sm_resp as decimal; the text receipt then carries them in hex (as some SMSCs do). */
  idFormat?: 'hex' | 'dec';
  /** The stat and err of the receipt for a destination (default DELIVRD 000). */
  outcome?: (destination: string) => { stat: string; err?: string };
  /** Answers this command_status instead of submitting, for the first `count` submits. */
  refuse?: { status: number; count: number };
  /** Serves SMPP over TLS with this key and certificate (PEM): its URL is then ssmpp://. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /**
   * The id of the first message it accepts, the next ones counting up. By default each SMSC numbers in a
   * random range of its own; two given the same `firstId` give their n-th messages the same id, as two real
   * carriers may.
   */
  firstId?: number;
  /**
   * Offers a receipt again, as a carrier does, until a deliver_sm_resp of status 0 acknowledges it: on another
   * session when its own closes unanswered (the client died), or a little later when it was refused.
   */
  redeliverReceipts?: boolean;
}

/** What a session bound as. */
export type SmscBindRole = 'transceiver' | 'transmitter' | 'receiver';

export class TestSmsc {
  readonly submits: SubmittedPdu[] = [];
  readonly sessions = new Set<Session>();
  bindAttempts = 0;
  /** The system_type of each bind attempt, in order. */
  readonly systemTypes: string[] = [];
  /** enquire_link requests answered. */
  enquireLinks = 0;
  /** Each bound session's role. */
  readonly roles = new Map<Session, SmscBindRole>();
  /** The role of the session each receipt went out on, in order. */
  readonly receiptsSentOn: SmscBindRole[] = [];
  /** Receipts waiting for a session that can take them (a transmitter's, before a receiver binds). */
  private unsentReceipts: ((session: Session) => void)[] = [];
  maxInFlight = 0;
  private inFlight = 0;
  private held: (() => void)[] = [];
  holdResponses = false;
  private server: ReturnType<typeof smpp.createServer>;
  // Each SMSC numbers its messages in its own range, as distinct SMSCs do, unless told where to start.
  private nextId: number;
  port = 0;
  private refused = 0;
  /** Receipts sent on each session and not acknowledged yet (with `redeliverReceipts`): how to offer each again. */
  private readonly unacknowledged = new Map<Session, Map<number, () => void>>();
  private nextReceipt = 0;
  private open = true;
  /** Receipts offered again (with `redeliverReceipts`). */
  receiptsOfferedAgain = 0;

  constructor(readonly options: SmscOptions = {}) {
    this.nextId = options.firstId ?? 1000 + Math.floor(Math.random() * 1_000_000) * 1000;
    this.server = this.createServer();
  }

  get url(): string {
    return `${this.options.tls ? 'ssmpp' : 'smpp'}://${this.options.systemId ?? 'pigeon'}:${this.options.password ?? 'secret'}@127.0.0.1:${this.port}`;
  }

  private createServer() {
    const listener = (session: Session) => {
      session.socket.setNoDelay(true);
      this.sessions.add(session);
      session.on('close', () => {
        this.sessions.delete(session);
        this.roles.delete(session);
        const unacknowledged = this.unacknowledged.get(session);
        this.unacknowledged.delete(session);
        if (this.open) for (const offer of unacknowledged?.values() ?? []) offer();
      });
      session.on('error', () => {});
      for (const role of ['transceiver', 'transmitter', 'receiver'] as const) {
        session.on(`bind_${role}`, (pdu: Pdu) => {
          this.bindAttempts++;
          this.systemTypes.push(String(pdu.system_type ?? ''));
          const ok =
            pdu.system_id === (this.options.systemId ?? 'pigeon') &&
            pdu.password === (this.options.password ?? 'secret');
          session.send(pdu.response({ command_status: ok ? 0 : smpp.ESME_RBINDFAIL }));
          if (!ok) {
            session.close();
            return;
          }
          this.roles.set(session, role);
          if (role !== 'transmitter') {
            const waiting = this.unsentReceipts;
            this.unsentReceipts = [];
            for (const send of waiting) send(session);
          }
        });
      }
      session.on('enquire_link', (pdu: Pdu) => {
        this.enquireLinks++;
        session.send(pdu.response());
      });
      session.on('unbind', (pdu: Pdu) => {
        session.send(pdu.response());
        session.close();
      });
      session.on('submit_sm', (pdu: Pdu) => this.onSubmit(session, pdu));
    };
    return this.options.tls
      ? smpp.createServer({ key: this.options.tls.key, cert: this.options.tls.cert }, listener)
      : smpp.createServer(listener);
  }

  /**
   * Where a receipt or MO for a client goes: its own session unless it bound as a transmitter, which takes
   * no deliver_sm; then a receiver's (or transceiver's) session of the same SMSC.
   */
  private deliverySession(session: Session | undefined): Session | undefined {
    if (session && this.roles.get(session) !== 'transmitter') return session;
    for (const [other, role] of this.roles)
      if (role !== 'transmitter' && this.sessions.has(other)) return other;
    return undefined;
  }

  async listen(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private onSubmit(session: Session, pdu: Pdu): void {
    if (this.options.refuse && this.refused < this.options.refuse.count) {
      this.refused++;
      session.send(pdu.response({ command_status: this.options.refuse.status }));
      return;
    }
    const raw = pdu.short_message as { message?: Buffer | string; udh?: Buffer[] } | Buffer;
    const bytes = this.rawBytes(pdu, raw);
    const esmClass = Number(pdu.esm_class);
    const udhi = (esmClass & 0x40) !== 0;
    const udh = udhi ? bytes.subarray(0, bytes[0] + 1) : undefined;
    const id = this.nextId++;
    const messageId = this.options.idFormat === 'dec' ? String(id) : id.toString(16);
    this.submits.push({
      destination: String(pdu.destination_addr),
      destTon: Number(pdu.dest_addr_ton),
      destNpi: Number(pdu.dest_addr_npi),
      source: String(pdu.source_addr),
      sourceTon: Number(pdu.source_addr_ton),
      sourceNpi: Number(pdu.source_addr_npi),
      esmClass,
      dataCoding: Number(pdu.data_coding),
      udh,
      payload: udh ? bytes.subarray(udh.length) : bytes,
      messageId,
      clientPort: session.socket.remotePort ?? 0,
    });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const respond = () => {
      this.inFlight--;
      session.send(pdu.response({ message_id: messageId }));
      if (this.options.receipts !== 'none') this.sendReceipt(session, id, String(pdu.destination_addr));
    };
    if (this.holdResponses) this.held.push(respond);
    else respond();
  }

  /** The bytes the client put on the wire, whatever the package decoded them into. */
  private rawBytes(pdu: Pdu, raw: { message?: Buffer | string; udh?: Buffer[] } | Buffer): Buffer {
    if (Buffer.isBuffer(raw)) return raw;
    const udh = raw.udh
      ? Buffer.concat([Buffer.from([raw.udh.reduce((n, ie) => n + ie.length, 0)]), ...raw.udh])
      : Buffer.alloc(0);
    const message = raw.message;
    let body: Buffer;
    if (Buffer.isBuffer(message)) body = message;
    else if (Number(pdu.data_coding) === 8) body = Buffer.from(String(message), 'utf16le').swap16();
    // The package decoded GSM 03.38 into text; its own encoder gives the septets back.
    else body = smpp.encodings.ASCII.encode(String(message ?? ''));
    return Buffer.concat([udh, body]);
  }

  /** Answers every held submit_sm. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const respond of held) respond();
  }

  private sendReceipt(submitSession: Session | undefined, id: number, destination: string): void {
    const session = this.deliverySession(submitSession);
    if (!session) {
      this.unsentReceipts.push((receiver) => this.sendReceiptOn(receiver, id, destination));
      return;
    }
    this.sendReceiptOn(session, id, destination);
  }

  private sendReceiptOn(session: Session, id: number, destination: string): void {
    this.receiptsSentOn.push(this.roles.get(session) ?? 'transceiver');
    const acknowledged = this.options.redeliverReceipts
      ? this.awaitAcknowledgement(session, id, destination)
      : undefined;
    const { stat, err = '000' } = this.options.outcome?.(destination) ?? { stat: 'DELIVRD' };
    const hexId = id.toString(16);
    if (this.options.receipts === 'tlv') {
      const states: Record<string, number> = {
        DELIVRD: 2,
        EXPIRED: 3,
        DELETED: 4,
        UNDELIV: 5,
        ACCEPTD: 6,
        UNKNOWN: 7,
        REJECTD: 8,
      };
      session.deliver_sm(
        {
          source_addr: destination,
          esm_class: 0x04,
          short_message: '',
          receipted_message_id: this.options.idFormat === 'dec' ? String(id) : hexId,
          message_state: states[stat] ?? 7,
        },
        acknowledged,
      );
      return;
    }
    session.deliver_sm(
      {
        source_addr: destination,
        esm_class: 0x04,
        short_message: `id:${hexId} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:2601051000 done date:2601051000 stat:${stat} err:${err} text:`,
      },
      acknowledged,
    );
  }

  /** Keeps a receipt until its deliver_sm_resp says 0; answers the callback that hears it. */
  private awaitAcknowledgement(session: Session, id: number, destination: string): (pdu: Pdu) => void {
    const key = this.nextReceipt++;
    const again = () => {
      this.receiptsOfferedAgain++;
      this.sendReceipt(undefined, id, destination);
    };
    const pending = this.unacknowledged.get(session) ?? new Map<number, () => void>();
    this.unacknowledged.set(session, pending);
    pending.set(key, again);
    return (pdu: Pdu) => {
      pending.delete(key);
      if (Number(pdu.command_status) !== 0 && this.open) setTimeout(again, 200).unref();
    };
  }

  /** Sends an MO from a handset over the first bound session; several parts when `parts` > 1. */
  sendMo(from: string, to: string, text: string, parts = 1, ref = 42): void {
    const session = this.deliverySession([...this.sessions][0]);
    if (!session) throw new Error('no SMPP session to send the MO on');
    if (parts === 1) {
      session.deliver_sm({
        source_addr: from,
        destination_addr: to,
        esm_class: 0,
        // A handset sends UCS-2 when the text has a character GSM 03.38 lacks (ê, say).
        data_coding: smpp.encodings.ASCII.decode(smpp.encodings.ASCII.encode(text)) === text ? 0 : 8,
        short_message: text,
      });
      return;
    }
    const size = Math.ceil(text.length / parts);
    for (let i = 0; i < parts; i++) {
      session.deliver_sm({
        source_addr: from,
        destination_addr: to,
        esm_class: 0x40,
        data_coding: 8,
        short_message: {
          udh: Buffer.from([0x05, 0x00, 0x03, ref, parts, i + 1]),
          message: text.slice(i * size, (i + 1) * size),
        },
      });
    }
  }

  /** Cuts every connection (the SMSC crashed). */
  dropAll(): void {
    for (const session of this.sessions) session.destroy();
  }

  async close(): Promise<void> {
    this.open = false;
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Stops listening and cuts connections, then listens again on the same port. */
  async restartAfter(stoppedFor: () => Promise<void>): Promise<void> {
    await this.close();
    await stoppedFor();
    this.server = this.createServer();
    this.open = true;
    await this.listen(this.port);
  }
}

/**
 * The SMPP client's options as the tests use them against a TestSmsc at `url`: one bind, a window of 10, no
 * throughput limit, quick reconnects; `overrides` change any of them.
 */
export function testSmppOptions(url: string, overrides: Partial<SmppOptions> = {}): SmppOptions {
  return {
    url,
    binds: 1,
    window: 10,
    tps: 0,
    enquireLinkMs: 30_000,
    responseTimeoutMs: 5_000,
    reconnectMinMs: 20,
    reconnectMaxMs: 100,
    backpressureRetries: 10,
    ...overrides,
  };
}
