// An SMPP 3.4 client: several transceiver binds, a window of in-flight submit_sm per bind, a throughput
// limit counted in parts, enquire_link keepalive and reconnection with backoff. The wire is `session.ts`;
// MOs are read by the `smpp` package's parser.
import smpp, { type Pdu } from 'smpp';
import { backoffMs } from '../../shared/backoff.ts';
import { senderAddress } from '../outbound-parts.ts';
import { parseReceipt } from '../receipt.ts';
import type { InboundHandler, InboundMessage, OutboundPart, SubmitOutcome, Transport } from '../transport.ts';
import { isAsciiCompatible, readDeliverSm, type SubmitSmFields } from './pdu-codec.ts';
import { SmppSession } from './session.ts';
import { classifySubmitStatus, isBackpressure } from './submit-status.ts';

export interface SmppOptions {
  /** smpp://system_id:password@host:port */
  url: string;
  binds: number;
  window: number;
  /** Parts per second over all binds; 0 for no limit. */
  tps: number;
  systemType?: string;
  enquireLinkMs: number;
  responseTimeoutMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Times a throttled or queue-full part is offered again before the worker is told to retry later. */
  backpressureRetries: number;
}

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface Pending {
  resolve(outcome: SubmitOutcome): void;
  timer: NodeJS.Timeout;
}

const receiptEsmMask = 0x3c;
const deliveryReceipt = 0x04;

function parseSmppUrl(url: string) {
  const parsed = new URL(url);
  if (parsed.protocol !== 'smpp:')
    throw new Error(`SMPP_URL must start with smpp://, got ${parsed.protocol}`);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 2775),
    systemId: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

/** The message text of a deliver_sm, from short_message or message_payload, after the package decoded it. */
function messageOf(pdu: Pdu): { text: string; udh: Buffer[] } {
  const raw = (pdu.message_payload ?? pdu.short_message) as
    | { message?: unknown; udh?: Buffer[] }
    | Buffer
    | string;
  if (typeof raw === 'string') return { text: raw, udh: [] };
  if (Buffer.isBuffer(raw)) return { text: raw.toString('latin1'), udh: [] };
  const message = raw?.message;
  const text =
    typeof message === 'string' ? message : Buffer.isBuffer(message) ? message.toString('latin1') : '';
  return { text, udh: raw?.udh ?? [] };
}

/** Concatenation info from a UDH (8- or 16-bit reference) or the SAR TLVs. */
function concatOf(pdu: Pdu, udh: Buffer[]): InboundMessage['part'] {
  for (const ie of udh) {
    if (ie[0] === 0x00 && ie.length >= 5) return { ref: ie[2], total: ie[3], seq: ie[4] };
    if (ie[0] === 0x08 && ie.length >= 6) return { ref: ie.readUInt16BE(2), total: ie[4], seq: ie[5] };
  }
  if (typeof pdu.sar_msg_ref_num === 'number' && typeof pdu.sar_total_segments === 'number') {
    return { ref: pdu.sar_msg_ref_num, total: pdu.sar_total_segments, seq: Number(pdu.sar_segment_seqnum) };
  }
  return undefined;
}

class Bind {
  session: SmppSession | undefined;
  bound = false;
  readonly pending = new Map<number, Pending>();
  private nextKey = 0;
  /** Connections lost or refused since the last bind: each one doubles the wait before the next try. */
  private failedConnects = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private awaitingEnquire = false;
  pausedUntil = 0;
  /** Slots handed out by acquire() whose submit_sm has not been written yet. */
  reserved = 0;
  /** Whether writes are held until the end of this event-loop turn (cork). */
  private corked = false;
  private stopped = false;

  constructor(
    readonly index: number,
    private readonly options: SmppOptions,
    private readonly handler: InboundHandler,
    private readonly log: Log,
    private readonly onReady: () => void,
  ) {}

  /**
   * Holds the socket's writes until the event loop's check phase, so the PDUs of one turn (a batch's
   * submit_sm, the deliver_sm_resp of receipts recorded together) leave in one write instead of one system
   * call each.
   */
  private cork(session: SmppSession): void {
    if (this.corked) return;
    const socket = session.socket;
    this.corked = true;
    socket.cork();
    setImmediate(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  get free(): number {
    return this.bound && Date.now() >= this.pausedUntil
      ? this.options.window - this.pending.size - this.reserved
      : 0;
  }

  connect(): void {
    if (this.stopped) return;
    const target = parseSmppUrl(this.options.url);
    const session: SmppSession = new SmppSession(target.host, target.port, {
      connect: () => {
        session.bindTransceiver(
          { systemId: target.systemId, password: target.password, systemType: this.options.systemType ?? '' },
          (status) => {
            if (status !== 0) {
              this.log.error(
                { bind: this.index, status },
                'SMPP bind refused (check SMPP_URL credentials); retrying with backoff',
              );
              session.destroy();
              return;
            }
            this.bound = true;
            this.failedConnects = 0;
            this.log.info({ bind: this.index, host: target.host, port: target.port }, 'SMPP bound');
            this.startKeepalive();
            this.onReady();
          },
        );
      },
      deliver: (pdu) => void this.onDeliver(session, pdu),
      error: (error) => this.log.warn({ bind: this.index, err: error.message }, 'SMPP connection error'),
      close: () => this.onClose(session),
    });
    this.session = session;
  }

  private startKeepalive(): void {
    clearInterval(this.keepaliveTimer);
    this.awaitingEnquire = false;
    this.keepaliveTimer = setInterval(() => {
      const session = this.session;
      if (!session || !this.bound) return;
      if (this.awaitingEnquire) {
        this.log.warn({ bind: this.index }, 'SMPP enquire_link unanswered; reconnecting');
        session.destroy();
        return;
      }
      this.awaitingEnquire = true;
      session.enquireLink(() => {
        this.awaitingEnquire = false;
      });
    }, this.options.enquireLinkMs);
    this.keepaliveTimer.unref();
  }

  private onClose(session: SmppSession): void {
    if (session !== this.session) return;
    this.bound = false;
    this.session = undefined;
    clearInterval(this.keepaliveTimer);
    for (const [key, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(key);
      pending.resolve({
        ok: false,
        retry: true,
        dlrStatus: 1,
        error: 'SMPP connection lost before submit_sm_resp',
      });
    }
    if (this.stopped) return;
    this.failedConnects++;
    const delay = backoffMs(this.failedConnects, this.options.reconnectMinMs, this.options.reconnectMaxMs);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private async onDeliver(session: SmppSession, raw: Buffer): Promise<void> {
    const sequence = raw.readUInt32BE(12);
    try {
      const fields = readDeliverSm(raw);
      const isReceipt =
        fields !== undefined &&
        ((fields.esmClass & receiptEsmMask) === deliveryReceipt || fields.receiptedMessageId !== undefined);
      if (isReceipt && isAsciiCompatible(fields.dataCoding)) {
        // A receipt's id, stat and err read the same whatever the GSM table: no need for the full parser.
        const text = (fields.messagePayload ?? fields.shortMessage).toString('latin1');
        await this.onReceipt(text, fields.receiptedMessageId, fields.messageState);
      } else {
        const pdu = new smpp.PDU(raw);
        const { text, udh } = messageOf(pdu);
        if (isReceipt) await this.onReceipt(text, pdu.receipted_message_id, pdu.message_state);
        else
          await this.handler.onInbound({
            from: String(pdu.source_addr ?? ''),
            to: String(pdu.destination_addr ?? ''),
            text,
            part: concatOf(pdu, udh),
          });
      }
      this.cork(session);
      session.answerDeliver(sequence);
    } catch (error) {
      // Not acknowledged as done: the SMSC keeps the message and offers it again.
      this.log.error(
        { bind: this.index, err: (error as Error).message },
        'deliver_sm not recorded; asking SMSC to retry',
      );
      session.answerDeliver(sequence, smpp.ESME_RX_T_APPN);
    }
  }

  private async onReceipt(text: string, receiptedMessageId: unknown, messageState: unknown): Promise<void> {
    const receipt = parseReceipt(text, { receiptedMessageId, messageState });
    if (receipt) await this.handler.onReceipt(receipt);
    else this.log.warn({ bind: this.index, text }, 'unreadable delivery receipt acknowledged and ignored');
  }

  /** Sends one submit_sm in a slot reserved by the transport's acquire(). */
  submit(fields: SubmitSmFields): Promise<{ status: number; messageId: string } | 'lost'> {
    this.reserved--;
    return new Promise((resolve) => {
      const session = this.session;
      if (!session || !this.bound) {
        resolve('lost');
        return;
      }
      const key = this.nextKey++;
      const timer = setTimeout(() => {
        this.pending.delete(key);
        resolve('lost');
        this.log.warn({ bind: this.index }, 'submit_sm_resp timed out; reconnecting');
        session.destroy();
      }, this.options.responseTimeoutMs);
      this.pending.set(key, {
        timer,
        resolve: (outcome) => resolve(outcome.ok ? { status: 0, messageId: outcome.smscId } : 'lost'),
      });
      this.cork(session);
      const sent = session.submitSm(fields, (status, messageId) => {
        const pending = this.pending.get(key);
        if (!pending) return;
        clearTimeout(pending.timer);
        this.pending.delete(key);
        resolve({ status, messageId });
        this.onReady();
      });
      if (!sent) {
        clearTimeout(timer);
        this.pending.delete(key);
        resolve('lost');
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.keepaliveTimer);
    const session = this.session;
    if (!session) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => session.destroy(), 2000);
      session.socket.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      if (this.bound) session.unbind(() => session.close());
      else session.destroy();
    });
  }
}

export class SmppTransport implements Transport {
  readonly name = 'smpp';
  readonly capacity: number;
  private binds: Bind[] = [];
  private waiters: (() => void)[] = [];
  private nextBind = 0;
  private tokens: number;
  private lastRefill = Date.now();

  constructor(
    private readonly options: SmppOptions,
    private readonly log: Log,
  ) {
    parseSmppUrl(options.url);
    this.tokens = options.tps;
    this.capacity = options.binds * options.window;
  }

  async start(handler: InboundHandler): Promise<void> {
    for (let i = 0; i < this.options.binds; i++) {
      const bind = new Bind(i, this.options, handler, this.log, () => this.wake());
      this.binds.push(bind);
      bind.connect();
    }
  }

  ready(): boolean {
    return this.binds.some((b) => b.bound);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Reserves a slot on a bound connection with room in its window, round-robin; waits for one. */
  private async acquire(): Promise<Bind> {
    for (;;) {
      for (let i = 0; i < this.binds.length; i++) {
        const bind = this.binds[(this.nextBind + i) % this.binds.length];
        if (bind.free > 0) {
          this.nextBind = (bind.index + 1) % this.binds.length;
          bind.reserved++;
          return bind;
        }
      }
      const paused = this.binds.filter((b) => b.bound && b.pausedUntil > Date.now());
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        if (paused.length > 0)
          setTimeout(() => this.wake(), Math.min(...paused.map((b) => b.pausedUntil)) - Date.now());
      });
    }
  }

  /** Takes one part from the throughput budget, waiting for it to refill. */
  private async throttle(): Promise<void> {
    const tps = this.options.tps;
    if (tps <= 0) return;
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(tps, this.tokens + ((now - this.lastRefill) * tps) / 1000);
      this.lastRefill = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(((1 - this.tokens) * 1000) / tps)));
    }
  }

  async submit(part: OutboundPart): Promise<SubmitOutcome> {
    const source = senderAddress(part.sender);
    const shortMessage = part.udh ? Buffer.concat([part.udh, part.payload]) : Buffer.from(part.payload);
    const fields: SubmitSmFields = {
      sourceTon: source.ton,
      sourceNpi: source.npi,
      source: source.addr,
      destTon: 1,
      destNpi: 1,
      destination: part.destination,
      esmClass: part.udh ? 0x40 : 0,
      registeredDelivery: 1,
      dataCoding: part.dataCoding,
      shortMessage,
    };
    for (let attempt = 0; ; attempt++) {
      await this.throttle();
      const bind = await this.acquire();
      const result = await bind.submit(fields);
      if (result === 'lost') {
        return { ok: false, retry: true, dlrStatus: 1, error: 'SMPP connection lost before submit_sm_resp' };
      }
      if (result.status === 0) return { ok: true, smscId: result.messageId };
      const outcome = classifySubmitStatus(result.status);
      if (isBackpressure(result.status)) {
        bind.pausedUntil = Date.now() + backoffMs(attempt + 1, 200, 10_000);
        if (attempt < this.options.backpressureRetries) continue;
      }
      return { ok: false, ...outcome };
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.binds.map((b) => b.stop()));
    this.wake();
  }
}
