// The parts of the `smpp` package (CommonJS, untyped) that Pigeon uses.
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  export interface Pdu {
    command: string;
    command_status: number;
    sequence_number: number;
    [field: string]: unknown;
    isResponse(): boolean;
    response(fields?: Record<string, unknown>): Pdu;
  }

  export class PDU implements Pdu {
    /** A PDU to send, by command name; or one read whole from the wire, header included. */
    constructor(command: string | Buffer, fields?: Record<string, unknown>);
    command: string;
    command_status: number;
    sequence_number: number;
    [field: string]: unknown;
    isResponse(): boolean;
    response(fields?: Record<string, unknown>): Pdu;
    toBuffer(): Buffer;
  }

  export interface Session extends EventEmitter {
    socket: Socket;
    server?: Server;
    send(pdu: Pdu, onResponse?: (pdu: Pdu) => void, onSent?: (pdu: Pdu) => void): boolean;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
    pause(): void;
    resume(): void;
    bind_transceiver(fields: Record<string, unknown>, onResponse?: (pdu: Pdu) => void): boolean;
    submit_sm(fields: Record<string, unknown>, onResponse?: (pdu: Pdu) => void): boolean;
    deliver_sm(fields: Record<string, unknown>, onResponse?: (pdu: Pdu) => void): boolean;
    enquire_link(fields?: Record<string, unknown>, onResponse?: (pdu: Pdu) => void): boolean;
    unbind(fields?: Record<string, unknown>, onResponse?: (pdu: Pdu) => void): boolean;
  }

  export interface Server extends NetServer {
    sessions: Session[];
  }

  export function connect(options: Record<string, unknown>, listener?: () => void): Session;
  export function createServer(
    options: Record<string, unknown>,
    listener?: (session: Session) => void,
  ): Server;
  export function createServer(listener?: (session: Session) => void): Server;

  /** Text codecs by name: ASCII (GSM 03.38 septets, unpacked), LATIN1, UCS2. */
  export const encodings: Record<string, { encode(value: string): Buffer; decode(value: Buffer): string }>;

  export const ESME_ROK: number;
  export const ESME_RINVMSGLEN: number;
  export const ESME_RSYSERR: number;
  export const ESME_RINVSRCADR: number;
  export const ESME_RINVDSTADR: number;
  export const ESME_RBINDFAIL: number;
  export const ESME_RINVPASWD: number;
  export const ESME_RINVSYSID: number;
  export const ESME_RMSGQFUL: number;
  export const ESME_RTHROTTLED: number;
  export const ESME_RSUBMITFAIL: number;
  export const ESME_RX_T_APPN: number;
  export const errors: Record<string, number>;
  export const consts: Record<string, Record<string, number>>;
}
