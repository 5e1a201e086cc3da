// One ESME's connection to the SMPP server: the byte stream cut into PDUs (a command_length under 16 or over
// the maximum is a broken stream: the connection is closed, nothing else), each request answered, and the
// deliver_sm the server sends it matched to their deliver_sm_resp. What a bind or a submit means is the
// server's (smpp-server.ts): the session only carries them.
import type { Socket } from 'node:net';
import { headerLength, maxPduLength, readHeader } from '../sms/smpp-wire.ts';
import { type Bind, Command, CommandStatus, encodeEmpty, encodeResp, fieldsOf, readBind } from './pdu.ts';
import type { BoundUser } from './smpp-users.service.ts';

export type BindMode = 'transmitter' | 'receiver' | 'transceiver';

const bindModes = new Map<number, { mode: BindMode; resp: number }>([
  [Command.bindTransmitter, { mode: 'transmitter', resp: Command.bindTransmitterResp }],
  [Command.bindReceiver, { mode: 'receiver', resp: Command.bindReceiverResp }],
  [Command.bindTransceiver, { mode: 'transceiver', resp: Command.bindTransceiverResp }],
]);

/**
 * The requests of a bound transmitter or transceiver, each answered by its host's handler (refused, an empty
 * response of its kind: SMPP 3.4 sends no body with a non-zero command_status).
 */
const asking = new Map<number, { resp: number; handler: 'submit' | 'data' | 'multi' | 'query' | 'cancel' }>([
  [Command.submitSm, { resp: Command.submitSmResp, handler: 'submit' }],
  [Command.dataSm, { resp: Command.dataSmResp, handler: 'data' }],
  [Command.submitMulti, { resp: Command.submitMultiResp, handler: 'multi' }],
  [Command.querySm, { resp: Command.querySmResp, handler: 'query' }],
  [Command.cancelSm, { resp: Command.cancelSmResp, handler: 'cancel' }],
]);

/** What the server does with a session's binds, submits and acknowledgements. */
export interface SessionHost {
  /** The command_status of the bind (0: bound, `session.user` and `session.mode` set). */
  bind(session: SmppSession, mode: BindMode, bind: Bind): Promise<number>;
  /** Told once a successful bind's answer is written: deliver_sm may follow it. */
  bound(session: SmppSession): void;
  /** The submit_sm_resp of a submit_sm (the session is bound to submit). */
  submit(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer>;
  /** The data_sm_resp of a data_sm: a submit_sm's text in message_payload (the session is bound to submit). */
  data(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer>;
  /** The submit_multi_resp of a submit_multi (the session is bound to submit). */
  multi(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer>;
  /** The query_sm_resp of a query_sm (the session is bound to submit). */
  query(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer>;
  /** The cancel_sm_resp of a cancel_sm (the session is bound to submit). */
  cancel(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer>;
  /** A deliver_sm_resp for the deliver_sm of outbox row `rowId`. */
  acknowledged(session: SmppSession, rowId: number, status: number): void;
  closed(session: SmppSession): void;
  log: { warn(fields: object, message: string): void };
}

/** A connection that has not bound within this time is closed. */
const bindTimeoutMs = 30_000;

export class SmppSession {
  user: BoundUser | undefined;
  mode: BindMode | undefined;
  /** The bind's row in `smpp_binds` (smpp-binds.ts), while bound. */
  bindId: number | undefined;
  /** Outbox rows sent as deliver_sm and not yet answered, by sequence number. */
  readonly inFlight = new Map<number, number>();
  private binding = false;
  private closing = false;
  private buffered: Buffer = Buffer.alloc(0);
  private sequence = 0;
  private readonly bindTimer: NodeJS.Timeout;

  constructor(
    readonly socket: Socket,
    private readonly host: SessionHost,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(this.bindTimer);
      this.closing = true;
      host.closed(this);
    });
    this.bindTimer = setTimeout(() => {
      if (!this.mode) socket.destroy();
    }, bindTimeoutMs);
    this.bindTimer.unref();
  }

  get clientIp(): string {
    return this.socket.remoteAddress ?? 'unknown';
  }

  /** Bound to receive deliver_sm: a receiver or a transceiver. */
  get receives(): boolean {
    return this.mode === 'receiver' || this.mode === 'transceiver';
  }

  get open(): boolean {
    return !this.closing && this.socket.writable;
  }

  write(pdu: Buffer): void {
    if (this.open) this.socket.write(pdu);
  }

  /** Sends a deliver_sm built for `sequence`, remembering which outbox row it carries. */
  deliver(rowId: number, build: (sequence: number) => Buffer): void {
    this.sequence = this.sequence >= 0x7fffffff ? 1 : this.sequence + 1;
    this.inFlight.set(this.sequence, rowId);
    this.write(build(this.sequence));
  }

  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.socket.end();
  }

  private received(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4) {
      const length = this.buffered.readUInt32BE(0);
      if (length < headerLength || length > maxPduLength) {
        this.host.log.warn(
          { ip: this.clientIp, systemId: this.user?.systemId, commandLength: length },
          'SMPP server: command_length out of bounds; connection closed',
        );
        this.socket.destroy();
        return;
      }
      if (this.buffered.length < length) return;
      const pdu = this.buffered.subarray(0, length);
      this.buffered = this.buffered.subarray(length);
      this.handle(pdu);
    }
  }

  private handle(pdu: Buffer): void {
    const { commandId, status, sequence } = readHeader(pdu);
    if (commandId & 0x80000000) {
      if (commandId === Command.deliverSmResp || commandId === Command.genericNack) {
        const rowId = this.inFlight.get(sequence);
        if (rowId !== undefined) {
          this.inFlight.delete(sequence);
          this.host.acknowledged(this, rowId, commandId === Command.genericNack && status === 0 ? 1 : status);
        }
      }
      return;
    }
    if (commandId === Command.enquireLink) {
      this.write(encodeEmpty(Command.enquireLinkResp, sequence));
      return;
    }
    if (commandId === Command.unbind) {
      this.write(encodeEmpty(Command.unbindResp, sequence));
      this.close();
      return;
    }
    const bind = bindModes.get(commandId);
    if (bind) {
      void this.bind(pdu, bind.mode, bind.resp, sequence);
      return;
    }
    const asks = asking.get(commandId);
    if (asks) {
      if (this.mode !== 'transmitter' && this.mode !== 'transceiver') {
        this.write(encodeEmpty(asks.resp, sequence, CommandStatus.ESME_RINVBNDSTS));
        return;
      }
      this.host[asks.handler](this, pdu, sequence).then(
        (resp) => this.write(resp),
        () => this.write(encodeEmpty(asks.resp, sequence, CommandStatus.ESME_RSYSERR)),
      );
      return;
    }
    // replace_sm and anything unknown: not served.
    this.write(encodeEmpty(Command.genericNack, sequence, CommandStatus.ESME_RINVCMDID));
  }

  private async bind(pdu: Buffer, mode: BindMode, resp: number, sequence: number): Promise<void> {
    if (this.mode || this.binding) {
      this.write(encodeResp(resp, sequence, CommandStatus.ESME_RALYBND, ''));
      return;
    }
    const fields = fieldsOf(readBind, pdu);
    if (!fields) {
      this.write(encodeResp(resp, sequence, CommandStatus.ESME_RBINDFAIL, ''));
      return;
    }
    this.binding = true;
    let result: number;
    try {
      result = await this.host.bind(this, mode, fields);
    } catch (error) {
      this.host.log.warn({ err: (error as Error).message }, 'SMPP server: bind failed');
      result = CommandStatus.ESME_RSYSERR;
    }
    this.binding = false;
    this.write(encodeResp(resp, sequence, result, result === 0 ? 'Pigeon' : ''));
    if (result === 0) this.host.bound(this);
  }
}
