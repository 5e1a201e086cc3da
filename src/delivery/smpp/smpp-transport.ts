// An SMPP 3.4 client, one connector: several binds (transceivers, or a transmitter and a receiver each), over
// TCP or TLS, a window of in-flight submit_sm per bind, a throughput limit counted in parts, enquire_link
// keepalive and reconnection with backoff. This file hands out window slots round-robin, holds the throughput
// budget and turns submit_sm_resp into outcomes; each connection is a `Bind` (`smpp-bind.ts`), its deliver_sm
// read by `deliver-sm.ts`; the wire is `session.ts`. Every log line and metric names the connector.
import { readFileSync } from 'node:fs';
import { backoffMs } from '../../shared/backoff.ts';
import type { Log } from '../../shared/log.ts';
import { type ConnectorStatus, LastError, RateMeter } from '../connector-status.ts';
import { senderAddress } from '../outbound-parts.ts';
import type { InboundHandler, OutboundPart, SubmitOutcome, Transport } from '../transport.ts';
import type { SubmitSmFields } from './pdu-codec.ts';
import type { TlsSettings } from './session.ts';
import { Bind, type ConnectorContext } from './smpp-bind.ts';
import type { SmppMetrics, SmppTransportOptions } from './smpp-options.ts';
import { parseSmppUrl, type SmppTarget } from './smpp-url.ts';
import { classifySubmitStatus, isBackpressure } from './submit-status.ts';

export type { BindMode, SmppMetrics, SmppOptions, SmppTransportOptions } from './smpp-options.ts';
export { parseSmppUrl } from './smpp-url.ts';

const defaultName = 'default';

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
