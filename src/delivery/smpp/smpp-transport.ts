// An SMPP 3.4 client, one connector: several binds (transceivers, or a transmitter and a receiver each), over
// TCP or TLS, a window of in-flight submit_sm per bind, a throughput limit counted in parts, enquire_link
// keepalive and reconnection with backoff. The wire is `session.ts`; MOs are read by the `smpp` package's
// parser. Every log line and metric names the connector.
import { readFileSync } from 'node:fs';
import smpp, { type Pdu } from 'smpp';
import { backoffMs } from '../../shared/backoff.ts';
import type { Log } from '../../shared/log.ts';
import { type ConnectorStatus, LastError, RateMeter } from '../connector-status.ts';
import { senderAddress } from '../outbound-parts.ts';
import { parseReceipt } from '../receipt.ts';
import type { InboundHandler, InboundMessage, OutboundPart, SubmitOutcome, Transport } from '../transport.ts';
import {
  type BindCommand,
  CommandId,
  isAsciiCompatible,
  readDeliverSm,
  type SubmitSmFields,
} from './pdu-codec.ts';
import { SmppSession, type TlsSettings } from './session.ts';
import { classifySubmitStatus, isBackpressure } from './submit-status.ts';

/** `transceiver`: one connection per bind does both; `transmitter-receiver`: two, submits on the first. */
export type BindMode = 'transceiver' | 'transmitter-receiver';

export interface SmppTransportOptions {
  /** The connector's name, in every log line and metric; `default` when not given. */
  name?: string;
  /** smpp://system_id:password@host:port, or ssmpp://… for SMPP over TLS. */
  url: string;
  /**
   * For an ssmpp:// URL: `caFile`, the certificate authorities to trust (PEM, read when the transport is
   * created; Node's own list without it); `checkServerName` false accepts a certificate that does not name
   * the host, still verifying its chain against the CA.
   */
  tls?: { caFile?: string; checkServerName: boolean };
  /** `transceiver` when not given. */
  bindMode?: BindMode;
  /** Bind slots: with `transmitter-receiver`, each is a transmitter and a receiver connection. */
  binds: number;
  window: number;
  /** Parts per second over all binds; 0 for no limit. */
  tps: number;
  systemType?: string;
  /**
   * TON and NPI of the destination, and of a numeric sender (an alphanumeric one is always 5/0). 1/1
   * (international, E.164) when not given: Pigeon stores numbers with their country code.
   */
  defaultTon?: number;
  defaultNpi?: number;
  enquireLinkMs: number;
  responseTimeoutMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Times a throttled or queue-full part is offered again before the worker is told to retry later. */
  backpressureRetries: number;
  /**
   * How long connecting and binding may take before the attempt is abandoned (the socket closed, a warning
   * logged) and retried with the reconnection backoff: an SMSC that accepts the connection but never answers
   * the bind would otherwise hold the bind down in silence. 10 s when not given.
   */
  bindTimeoutMs?: number;
}

/** The options' earlier name. */
export type SmppOptions = SmppTransportOptions;

const defaultBindTimeoutMs = 10_000;
const defaultName = 'default';

/** Told of throttling and reconnections, for the operator's metrics (src/ops), by connector name. */
export interface SmppMetrics {
  throttled(connector: string): void;
  reconnecting(connector: string): void;
}

interface Pending {
  resolve(outcome: SubmitOutcome): void;
  timer: NodeJS.Timeout;
}

const receiptEsmMask = 0x3c;
const deliveryReceipt = 0x04;

/**
 * The host, port, credentials and whether TLS is used, from an smpp:// or ssmpp:// URL; throws naming what is
 * wrong. The default port is 2775, 3550 for ssmpp:// (the `smpp` package's).
 */
export function parseSmppUrl(url: string) {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('the SMPP URL is not a URL (smpp://system_id:password@host:port)');
  }
  if (parsed.protocol !== 'smpp:' && parsed.protocol !== 'ssmpp:')
    throw new Error(`the SMPP URL must start with smpp:// or ssmpp://, got ${parsed.protocol}//`);
  if (!parsed.hostname) throw new Error('the SMPP URL names no host');
  const tls = parsed.protocol === 'ssmpp:';
  return {
    tls,
    // An IPv6 literal comes bracketed from URL; sockets want it bare.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(parsed.port || (tls ? 3550 : 2775)),
    systemId: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

type SmppTarget = ReturnType<typeof parseSmppUrl>;

/** What one connection binds as. */
type BindRole = 'transceiver' | 'transmitter' | 'receiver';

const bindCommands: Record<BindRole, BindCommand> = {
  transceiver: CommandId.bindTransceiver,
  transmitter: CommandId.bindTransmitter,
  receiver: CommandId.bindReceiver,
};

/** What the binds of one connector share: its name, target, TLS settings, log, metrics and last error. */
interface ConnectorContext {
  name: string;
  target: SmppTarget;
  tls: TlsSettings | undefined;
  options: SmppTransportOptions;
  handler: InboundHandler;
  log: Log;
  metrics: SmppMetrics | undefined;
  lastError: LastError;
  onReady(): void;
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
  failedConnects = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private awaitingEnquire = false;
  pausedUntil = 0;
  /** Slots handed out by acquire() whose submit_sm has not been written yet. */
  reserved = 0;
  /** Whether writes are held until the end of this event-loop turn (cork). */
  private corked = false;
  private stopped = false;
  /** Whether the current connection's trouble is already the last error (its close then says no more). */
  private failedThisConnection = false;
  /** Whether submits may go through this connection (a receiver only takes deliveries). */
  readonly submits: boolean;

  constructor(
    readonly index: number,
    readonly role: BindRole,
    private readonly connector: ConnectorContext,
  ) {
    this.submits = role !== 'receiver';
  }

  private get options(): SmppTransportOptions {
    return this.connector.options;
  }

  private get log(): Log {
    return this.connector.log;
  }

  /** Fields of every log line of this bind. */
  private get where() {
    const { target, name } = this.connector;
    return { connector: name, bind: this.index, role: this.role, host: target.host, port: target.port };
  }

  /** Logs a warning and keeps it as the connector's last error. */
  private fail(obj: object, cause: string, msg: string, level: 'warn' | 'error' = 'warn'): void {
    this.failedThisConnection = true;
    this.connector.lastError.set(cause);
    this.log[level]({ ...this.where, ...obj, cause }, msg);
  }

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
    return this.submits && this.bound && Date.now() >= this.pausedUntil
      ? this.options.window - this.pending.size - this.reserved
      : 0;
  }

  connect(): void {
    if (this.stopped) return;
    this.failedThisConnection = false;
    const { target, tls, name } = this.connector;
    const hostPort = `${target.host}:${target.port}`;
    const bindTimeoutMs = this.options.bindTimeoutMs ?? defaultBindTimeoutMs;
    // What the attempt is waiting for, named in the warning when it does not come in time.
    let waitingFor = 'TCP connection';
    // Whether a warning already told why this attempt ends (so its close does not say it again).
    let reported = false;
    const bindTimer = setTimeout(() => {
      reported = true;
      const cause = `no ${waitingFor} within ${bindTimeoutMs} ms`;
      this.fail(
        { bindTimeoutMs },
        cause,
        `SMPP bind to ${hostPort} abandoned: ${cause} (SMPP_BIND_TIMEOUT_MS); closing the connection and retrying with backoff`,
      );
      session.destroy();
    }, bindTimeoutMs);
    bindTimer.unref();
    const command = `bind_${this.role}`;
    const session: SmppSession = new SmppSession(
      target.host,
      target.port,
      {
        connect: () => {
          waitingFor = `answer to ${command}`;
          session.bind(
            bindCommands[this.role],
            {
              systemId: target.systemId,
              password: target.password,
              systemType: this.options.systemType ?? '',
            },
            (status) => {
              clearTimeout(bindTimer);
              if (status !== 0) {
                reported = true;
                this.fail(
                  { status },
                  `${command} refused with command_status 0x${status.toString(16).padStart(8, '0')}`,
                  `SMPP bind of connector ${name} to ${hostPort} refused (check the URL's system_id and password, and system_type); retrying with backoff`,
                  'error',
                );
                session.destroy();
                return;
              }
              this.bound = true;
              this.failedConnects = 0;
              this.log.info(this.where, `SMPP bound (${this.role})`);
              this.startKeepalive();
              this.connector.onReady();
            },
          );
        },
        deliver: (pdu) => void this.onDeliver(session, pdu),
        error: (error) => {
          reported = true;
          const code = (error as NodeJS.ErrnoException).code;
          const cause = code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
          if (waitingFor === 'TLS handshake') {
            // The handshake failed: a certificate not signed by the CA, or naming another host.
            this.fail(
              {},
              `TLS: ${cause}`,
              `SMPP over TLS to ${hostPort} (connector ${name}) refused: ${cause}; check tls.caFile and the certificate's name (tls.checkServerName); retrying with backoff`,
            );
          } else {
            this.fail({}, cause, `SMPP connection error with ${hostPort} (connector ${name}): ${cause}`);
          }
        },
        close: () => {
          clearTimeout(bindTimer);
          if (!this.stopped && session === this.session) {
            if (this.bound) {
              if (!this.failedThisConnection)
                this.fail(
                  {},
                  `connection to ${hostPort} closed`,
                  `SMPP connection to ${hostPort} (connector ${name}) lost; reconnecting with backoff`,
                );
            } else if (!reported) {
              this.fail(
                {},
                'connection closed before the bind completed',
                `SMPP connection to ${hostPort} (connector ${name}) closed before the bind completed; retrying with backoff`,
              );
            }
          }
          this.onClose(session);
        },
      },
      tls,
    );
    if (tls)
      session.socket.once('connect', () => {
        waitingFor = 'TLS handshake';
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
        this.fail({}, 'enquire_link unanswered', 'SMPP enquire_link unanswered; reconnecting');
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
    this.connector.metrics?.reconnecting(this.connector.name);
    this.failedConnects++;
    const delay = backoffMs(this.failedConnects, this.options.reconnectMinMs, this.options.reconnectMaxMs);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private async onDeliver(session: SmppSession, raw: Buffer): Promise<void> {
    const sequence = raw.readUInt32BE(12);
    const { handler } = this.connector;
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
          await handler.onInbound({
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
        { ...this.where, err: (error as Error).message },
        'deliver_sm not recorded; asking SMSC to retry',
      );
      session.answerDeliver(sequence, smpp.ESME_RX_T_APPN);
    }
  }

  private async onReceipt(text: string, receiptedMessageId: unknown, messageState: unknown): Promise<void> {
    const receipt = parseReceipt(text, { receiptedMessageId, messageState });
    if (receipt) await this.connector.handler.onReceipt(receipt);
    else this.log.warn({ ...this.where, text }, 'unreadable delivery receipt acknowledged and ignored');
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
        this.fail({}, 'submit_sm_resp timed out', 'submit_sm_resp timed out; reconnecting');
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
        this.connector.onReady();
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
  /** The connector's name, in its logs, metrics and status. */
  readonly connector: string;
  /** Submits in flight at most: the transmitting binds (transceivers or transmitters) × the window. */
  readonly capacity: number;
  private binds: Bind[] = [];
  /** The binds submits go through, in slot order. */
  private senders: Bind[] = [];
  private waiters: (() => void)[] = [];
  private nextBind = 0;
  private tokens: number;
  private lastRefill = Date.now();
  private readonly target: SmppTarget;
  private readonly tls: TlsSettings | undefined;
  private readonly lastError = new LastError();
  private readonly accepted = new RateMeter();
  private readonly destTon: number;
  private readonly destNpi: number;

  constructor(
    private readonly options: SmppTransportOptions,
    private readonly log: Log,
    private readonly metrics?: SmppMetrics,
  ) {
    this.connector = options.name ?? defaultName;
    try {
      this.target = parseSmppUrl(options.url);
    } catch (error) {
      throw new Error(`connector ${this.connector}: ${(error as Error).message}`);
    }
    if (this.target.tls) {
      const caFile = options.tls?.caFile;
      let ca: Buffer | undefined;
      if (caFile !== undefined) {
        try {
          ca = readFileSync(caFile);
        } catch (error) {
          throw new Error(
            `connector ${this.connector}: tls.caFile ${caFile} cannot be read: ${(error as Error).message}`,
          );
        }
        if (!ca.toString('latin1').includes('-----BEGIN CERTIFICATE-----'))
          throw new Error(`connector ${this.connector}: tls.caFile ${caFile} holds no PEM certificate`);
      }
      this.tls = { ca, checkServerName: options.tls?.checkServerName ?? true };
    }
    this.destTon = options.defaultTon ?? 1;
    this.destNpi = options.defaultNpi ?? 1;
    this.tokens = options.tps;
    this.capacity = options.binds * options.window;
  }

  async start(handler: InboundHandler): Promise<void> {
    const context: ConnectorContext = {
      name: this.connector,
      target: this.target,
      tls: this.tls,
      options: this.options,
      handler,
      log: this.log,
      metrics: this.metrics,
      lastError: this.lastError,
      onReady: () => this.wake(),
    };
    const split = this.options.bindMode === 'transmitter-receiver';
    for (let i = 0; i < this.options.binds; i++) {
      const sender = new Bind(i, split ? 'transmitter' : 'transceiver', context);
      this.binds.push(sender);
      this.senders.push(sender);
      if (split) this.binds.push(new Bind(i, 'receiver', context));
    }
    for (const bind of this.binds) bind.connect();
  }

  /** True while a bind that can submit (a transceiver or transmitter) is up. */
  ready(): boolean {
    return this.senders.some((b) => b.bound);
  }

  /**
   * Connections up and configured (a transmitter and a receiver count as two), and submits awaiting their
   * answer now against the window of the transmitting binds.
   */
  usage() {
    let bindsUp = 0;
    let windowInUse = 0;
    for (const bind of this.binds) {
      if (bind.bound) bindsUp++;
      windowInUse += bind.pending.size;
    }
    return {
      connector: this.connector,
      bindsUp,
      binds:
        this.binds.length || this.options.binds * (this.options.bindMode === 'transmitter-receiver' ? 2 : 1),
      windowInUse,
      windowSize: this.capacity,
    };
  }

  /** What `pigeon connectors` shows of this connector. */
  status(): ConnectorStatus {
    const usage = this.usage();
    const state = this.ready()
      ? 'bound'
      : this.binds.some((b) => b.failedConnects > 0)
        ? 'down'
        : 'connecting';
    return {
      name: this.connector,
      kind: 'smpp',
      bindsUp: usage.bindsUp,
      bindsTotal: usage.binds,
      state,
      windowInUse: usage.windowInUse,
      windowSize: usage.windowSize,
      pps: this.accepted.perSecond(),
      lastError: this.lastError.message,
      lastErrorAt: this.lastError.at,
    };
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Reserves a slot on a bound connection with room in its window, round-robin; waits for one. */
  private async acquire(): Promise<Bind> {
    const senders = this.senders;
    for (;;) {
      for (let i = 0; i < senders.length; i++) {
        const bind = senders[(this.nextBind + i) % senders.length];
        if (bind.free > 0) {
          this.nextBind = (bind.index + 1) % senders.length;
          bind.reserved++;
          return bind;
        }
      }
      const paused = senders.filter((b) => b.bound && b.pausedUntil > Date.now());
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

  async submit(part: OutboundPart, mayWrite?: () => boolean): Promise<SubmitOutcome> {
    const source = senderAddress(part.sender);
    // A numeric sender is an address like the destination, in the carrier's convention; a name stays 5/0.
    if (source.ton === 1) {
      source.ton = this.destTon;
      source.npi = this.destNpi;
    }
    const shortMessage = part.udh ? Buffer.concat([part.udh, part.payload]) : Buffer.from(part.payload);
    const fields: SubmitSmFields = {
      sourceTon: source.ton,
      sourceNpi: source.npi,
      source: source.addr,
      destTon: this.destTon,
      destNpi: this.destNpi,
      destination: part.destination,
      esmClass: part.udh ? 0x40 : 0,
      registeredDelivery: 1,
      dataCoding: part.dataCoding,
      shortMessage,
    };
    for (let attempt = 0; ; attempt++) {
      await this.throttle();
      const bind = await this.acquire();
      // Asked in the same turn as the write below, after the waits for the budget and a window slot.
      if (mayWrite && !mayWrite()) {
        bind.reserved--;
        this.wake();
        return { ok: false, retry: true, dlrStatus: 1, error: 'not sent: the sender withdrew it' };
      }
      const result = await bind.submit(fields);
      if (result === 'lost') {
        return { ok: false, retry: true, dlrStatus: 1, error: 'SMPP connection lost before submit_sm_resp' };
      }
      if (result.status === 0) {
        this.accepted.add();
        return { ok: true, smscId: result.messageId };
      }
      const outcome = classifySubmitStatus(result.status);
      if (isBackpressure(result.status)) {
        this.metrics?.throttled(this.connector);
        bind.pausedUntil = Date.now() + backoffMs(attempt + 1, 200, 10_000);
        if (attempt < this.options.backpressureRetries) continue;
      }
      return { ok: false, ...outcome, commandStatus: result.status };
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.binds.map((b) => b.stop()));
    this.wake();
  }
}
