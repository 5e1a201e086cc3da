// One connection of a connector (a transceiver, or a transmitter or a receiver): connecting and binding within
// the bind timeout, enquire_link keepalive, reconnecting with backoff when it is lost, and its window of
// submit_sm awaiting their answer. Its deliver_sm are read by `deliver-sm.ts`.
import { backoffMs } from '../../shared/backoff.ts';
import type { Log } from '../../shared/log.ts';
import type { LastError } from '../connector-status.ts';
import type { InboundHandler, SubmitOutcome } from '../transport.ts';
import { answerDeliverSm, type DeliverSmReader } from './deliver-sm.ts';
import { type BindCommand, CommandId, type SubmitSmFields } from './pdu-codec.ts';
import { SmppSession, type TlsSettings } from './session.ts';
import type { SmppMetrics, SmppTransportOptions } from './smpp-options.ts';
import type { SmppTarget } from './smpp-url.ts';

const defaultBindTimeoutMs = 10_000;

interface Pending {
  resolve(outcome: SubmitOutcome): void;
  timer: NodeJS.Timeout;
}

/** What one connection binds as. */
type BindRole = 'transceiver' | 'transmitter' | 'receiver';

const bindCommands: Record<BindRole, BindCommand> = {
  transceiver: CommandId.bindTransceiver,
  transmitter: CommandId.bindTransmitter,
  receiver: CommandId.bindReceiver,
};

/** What the binds of one connector share: its name, target, TLS settings, log, metrics and last error. */
export interface ConnectorContext {
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

/** One connection of a connector, and its window of submit_sm awaiting their submit_sm_resp. */
export class Bind implements DeliverSmReader {
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

  get log(): Log {
    return this.connector.log;
  }

  get handler(): InboundHandler {
    return this.connector.handler;
  }

  /** Fields of every log line of this bind. */
  get where() {
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
  cork(session: SmppSession): void {
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
        deliver: (pdu) => void answerDeliverSm(this, session, pdu),
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
