// One SMPP connection from the ESME side, over TCP or TLS: framing, sequence numbers, answers matched to
// their requests, and the SMSC's enquire_link and unbind answered here. The binds, windows and reconnection
// live in the transport; this is only the wire.
import { connect, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import {
  type BindCommand,
  type BindFields,
  CommandId,
  encodeBind,
  encodeDeliverSmResp,
  encodeEmpty,
  encodeSubmitSm,
  headerLength,
  maxPduLength,
  readSubmitSmResp,
  type SubmitSmFields,
} from './pdu-codec.ts';

/** An answer to one of our requests: its status and, for submit_sm_resp, the message id. */
type OnAnswer = (status: number, messageId: string) => void;

/** How an `ssmpp://` connection checks the SMSC's certificate. */
export interface TlsSettings {
  /** The certificate authorities to trust (PEM); Node's own list when absent. */
  ca?: Buffer;
  /**
   * Whether the certificate must name the host connected to. False still verifies the chain against `ca`:
   * only the name is not compared (an SMSC reached by an address its certificate does not list).
   */
  checkServerName: boolean;
}

export interface SessionEvents {
  /** TCP connected, and for TLS the handshake done and the certificate accepted: the bind may be sent. */
  connect(): void;
  /** A deliver_sm, whole, header included; the listener answers it with `answerDeliver`. */
  deliver(pdu: Buffer): void;
  error(error: Error): void;
  close(): void;
}

const invalidCommandId = 0x00000003;

export class SmppSession {
  readonly socket: Socket;
  private sequence = 0;
  private readonly answers = new Map<number, OnAnswer>();
  private pending: Buffer | undefined;
  /** TCP is connected (for TLS the handshake may still be under way). */
  tcpConnected = false;

  constructor(
    host: string,
    port: number,
    private readonly events: SessionEvents,
    tls?: TlsSettings,
  ) {
    if (tls) {
      this.socket = connectTls({
        host,
        port,
        ca: tls.ca,
        // SNI takes a host name only: RFC 6066 forbids an address there.
        servername: isIP(host) ? undefined : host,
        // Node's own check unless turned off; an explicit undefined here is refused by Node.
        ...(tls.checkServerName ? {} : { checkServerIdentity: () => undefined }),
      });
      this.socket.on('connect', () => {
        this.tcpConnected = true;
      });
      this.socket.on('secureConnect', () => events.connect());
    } else {
      this.socket = connect({ host, port });
      this.socket.on('connect', () => {
        this.tcpConnected = true;
        events.connect();
      });
    }
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (error) => events.error(error));
    this.socket.on('close', () => {
      this.answers.clear();
      events.close();
    });
  }

  private nextSequence(): number {
    this.sequence = this.sequence >= 0x7fffffff ? 1 : this.sequence + 1;
    return this.sequence;
  }

  private request(encode: (sequence: number) => Buffer, onAnswer?: OnAnswer): boolean {
    if (!this.socket.writable) return false;
    const sequence = this.nextSequence();
    if (onAnswer) this.answers.set(sequence, onAnswer);
    this.socket.write(encode(sequence));
    return true;
  }

  bind(command: BindCommand, fields: BindFields, onAnswer: (status: number) => void): boolean {
    return this.request((seq) => encodeBind(command, seq, fields), onAnswer);
  }

  submitSm(fields: SubmitSmFields, onAnswer: OnAnswer): boolean {
    return this.request((seq) => encodeSubmitSm(seq, fields), onAnswer);
  }

  enquireLink(onAnswer: () => void): boolean {
    return this.request((seq) => encodeEmpty(CommandId.enquireLink, seq), onAnswer);
  }

  unbind(onAnswer: () => void): boolean {
    return this.request((seq) => encodeEmpty(CommandId.unbind, seq), onAnswer);
  }

  answerDeliver(sequence: number, status = 0): void {
    if (this.socket.writable) this.socket.write(encodeDeliverSmResp(sequence, status));
  }

  /** Ends the connection after what is written. */
  close(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    let buffer = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    let at = 0;
    while (buffer.length - at >= 4) {
      const length = buffer.readUInt32BE(at);
      if (length < headerLength || length > maxPduLength) {
        this.events.error(new Error(`SMPP stream broken: a PDU of ${length} bytes`));
        this.socket.destroy();
        return;
      }
      if (buffer.length - at < length) break;
      this.onPdu(buffer.subarray(at, at + length));
      at += length;
    }
    if (at < buffer.length) {
      buffer = buffer.subarray(at);
      // Keep a copy of the remainder only: a subarray would hold the whole chunk until the rest arrives.
      this.pending = Buffer.from(buffer);
    }
  }

  private onPdu(pdu: Buffer): void {
    const commandId = pdu.readUInt32BE(4);
    const sequence = pdu.readUInt32BE(12);
    if (commandId & 0x80000000) {
      const onAnswer = this.answers.get(sequence);
      if (!onAnswer) return;
      this.answers.delete(sequence);
      const status = pdu.readUInt32BE(8);
      onAnswer(status, commandId === CommandId.submitSmResp ? readSubmitSmResp(pdu) : '');
      return;
    }
    switch (commandId) {
      case CommandId.deliverSm:
        this.events.deliver(pdu);
        return;
      case CommandId.enquireLink:
        this.socket.write(encodeEmpty(CommandId.enquireLinkResp, sequence));
        return;
      case CommandId.unbind:
        this.socket.write(encodeEmpty(CommandId.unbindResp, sequence));
        this.socket.end();
        return;
      case CommandId.alertNotification:
        // The one request SMPP 3.4 answers with nothing.
        return;
      default:
        this.socket.write(encodeEmpty(CommandId.genericNack, sequence, invalidCommandId));
    }
  }
}
