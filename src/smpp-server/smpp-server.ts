// Pigeon's SMPP 3.4 server (SMPP_SERVER_PORT, and over TLS SMPP_SERVER_TLS_PORT): customers' ESMEs bind with
// the SMPP credentials of their account (smpp-users.service.ts), submit_sm (or data_sm) is a send of that
// account through the sending service (smpp-messages.service.ts), and receipts and replies of those sends go
// back to the user's receiver and transceiver binds as deliver_sm (outbox-pump.ts). Binds are braked per address
// like failed sign-ins, limited per user (max_binds, counted across processes: smpp-binds.ts), and submits
// throttled per user (tps, this process's share of it).
import { readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { Clock } from '../shared/clock.ts';
import { createBindBrake } from './bind-brake.ts';
import { createConcatenation, decodeText, submitBody, supportedCodings } from './inbound-text.ts';
import { createOutboxPump } from './outbox-pump.ts';
import {
  Command,
  CommandStatus,
  encodeEmpty,
  encodeQuerySmResp,
  encodeResp,
  encodeSubmitMultiResp,
  fieldsOf,
  readCancelSm,
  readDataSm,
  readQuerySm,
  readSubmitMulti,
  readSubmitSm,
  type SubmitSm,
} from './pdu.ts';
import type { BindRegistry } from './smpp-binds.ts';
import {
  type SmppMessagesService,
  type SmppSubmit,
  SubmitRefused,
  wantsReceipt,
} from './smpp-messages.service.ts';
import { type SessionHost, SmppSession } from './smpp-session.ts';
import { parseSmppTime } from './smpp-time.ts';
import type { BindRefusal, BoundUser, SmppUsersService } from './smpp-users.service.ts';
import { createThrottle } from './throttle.ts';

const refusalStatus: Record<BindRefusal, number> = {
  'unknown-system-id': CommandStatus.ESME_RINVSYSID,
  'wrong-password': CommandStatus.ESME_RINVPASWD,
  'ip-not-allowed': CommandStatus.ESME_RBINDFAIL,
};

export interface SmppServerOptions {
  /** Failed binds per address within `brakeWindowMs` before its binds are refused unchecked (0: no brake). */
  brakeFailures: number;
  brakeWindowMs: number;
  /** How often the outbox is read while a receiving bind is up, besides the nudges. */
  pollMs: number;
  /** How long the parts of a long message wait for the rest. */
  concatTtlMs: number;
  /**
   * How often the users bound are checked (the binds of one deleted meanwhile are closed) and this server's
   * binds renewed in `smpp_binds`.
   */
  userCheckMs: number;
}

export interface Log {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export type SmppServer = ReturnType<typeof createSmppServer>;

/**
 * Ids for the earlier parts of long messages: decimal (Kannel's `msg-id-type` 0x00 reads ids as decimal),
 * 16 digits from the wall clock's milliseconds and a counter, so they never meet a campaign's ticket and do not
 * repeat after a restart.
 */
function partIdSource() {
  let lastMs = 0;
  let counter = 0;
  return {
    next(): string {
      const ms = Date.now();
      if (ms > lastMs) {
        lastMs = ms;
        counter = 0;
      } else if (++counter === 1000) {
        lastMs++;
        counter = 0;
      }
      return String(lastMs * 1000 + counter);
    },
  };
}

export function createSmppServer(deps: {
  users: Pick<SmppUsersService, 'authenticate' | 'existing'>;
  messages: SmppMessagesService;
  binds: BindRegistry;
  clock: Clock;
  log: Log;
  options: SmppServerOptions;
}) {
  const { clock, log, options } = deps;
  const now = () => clock.now();
  const sessions = new Set<SmppSession>();
  const byUser = new Map<number, Set<SmppSession>>();
  const brake = createBindBrake({ failures: options.brakeFailures, windowMs: options.brakeWindowMs, now });
  const throttle = createThrottle(now);
  /** Queries have a budget of their own, as large: polling does not slow a user's submits. */
  const queryThrottle = createThrottle(now);
  const concatenation = createConcatenation({ ttlMs: options.concatTtlMs, maxPending: 1000, now });
  const partIdsOf = partIdSource();
  const listeners: net.Server[] = [];

  /** Closes the binds of users deleted since they bound (`smpp-user delete`, DELETE /smpp/user). */
  async function closeDeleted(): Promise<void> {
    if (byUser.size === 0) return;
    const bound = [...byUser.keys()];
    const existing = await deps.users.existing(bound);
    for (const userId of bound) {
      if (existing.has(userId)) continue;
      for (const session of byUser.get(userId) ?? []) {
        log.warn({ systemId: session.user?.systemId }, 'SMPP server: user deleted; its bind is closed');
        session.socket.destroy();
      }
    }
  }
  let userCheck: NodeJS.Timeout | undefined;

  const receivers = () => {
    const found = new Map<number, SmppSession[]>();
    for (const [userId, set] of byUser) {
      const receiving = [...set].filter((s) => s.receives && s.open);
      if (receiving.length > 0) found.set(userId, receiving);
    }
    return found;
  };
  const pump = createOutboxPump({ messages: deps.messages, receivers, log, pollMs: options.pollMs, now });

  /**
   * A submit's text, read as the server takes it: its schedule parsed, the user's tps taken (`count`: one per
   * destination), its coding checked, its part of a long message joined with the others (`to` names the
   * message's destinations in the key). Answers the command_status refusing it, or the id to answer an earlier
   * part with, or the whole text to send.
   */
  function prepared(
    user: BoundUser,
    sm: Omit<SubmitSm, 'destTon' | 'destNpi' | 'destination'>,
    to: string,
    count: number,
  ): { refused: number } | { partId: string } | Omit<SmppSubmit, 'destination'> {
    let dueAt: number | undefined;
    if (sm.scheduleDeliveryTime !== '') {
      dueAt = parseSmppTime(sm.scheduleDeliveryTime, now());
      if (dueAt === undefined) return { refused: CommandStatus.ESME_RINVSCHED };
    }
    if (!throttle.take(user.id, deps.binds.tpsHere(user.id, user.tps), count))
      return { refused: CommandStatus.ESME_RTHROTTLED };
    if (!supportedCodings.has(sm.dataCoding)) return { refused: CommandStatus.unsupportedCoding };
    const body = submitBody(sm);
    if ('error' in body) return { refused: CommandStatus.ESME_RINVESMCLASS };
    let bytes = body.bytes;
    let partIds: string[] = [];
    let earlierIds: string[] = [];
    if (body.part) {
      const id = partIdsOf.next();
      // Kannel asks for a receipt on one part of a long message only: each part's own wish is kept.
      const receipt = wantsReceipt(sm.registeredDelivery);
      const whole = concatenation.add(user.id, sm.source, to, sm.dataCoding, body.part, bytes, id, receipt);
      // An earlier part: answered at once (a client with a window of one sends the next only then), under an
      // id of its own; the message is sent and charged with its last part, and each part that asked gets a receipt.
      if (whole === undefined) return { partId: id };
      if ('error' in whole) return { refused: CommandStatus.ESME_RINVESMCLASS };
      bytes = whole.bytes;
      partIds = whole.receiptIds;
      earlierIds = whole.otherIds;
    }
    return {
      source: sm.source,
      text: decodeText(sm.dataCoding, bytes),
      unicode: sm.dataCoding === 8,
      registeredDelivery: sm.registeredDelivery,
      partIds,
      earlierIds,
      dueAt,
    };
  }

  /** The command_status of a send that threw: its refusal's, or ESME_RSYSERR (logged). */
  function refusalOf(error: unknown, user: BoundUser): number {
    if (error instanceof SubmitRefused) return error.status;
    log.warn({ err: (error as Error).message, systemId: user.systemId }, 'SMPP server: submit failed');
    return CommandStatus.ESME_RSYSERR;
  }

  /**
   * The handler of a submit_sm or a data_sm, read by `read` and answered by a PDU of command `resp`: a send of the
   * user's account.
   */
  const submitting =
    (read: (pdu: Buffer) => SubmitSm, resp: number) =>
    async (session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer> => {
      const user = session.user!;
      const sm = fieldsOf(read, pdu);
      if (!sm) return encodeResp(resp, sequence, CommandStatus.ESME_RINVCMDLEN, '');
      const ready = prepared(user, sm, sm.destination, 1);
      if ('refused' in ready) return encodeResp(resp, sequence, ready.refused, '');
      if ('partId' in ready) return encodeResp(resp, sequence, 0, ready.partId);
      try {
        const messageId = await deps.messages.submit(user, session.clientIp, {
          ...ready,
          destination: sm.destination,
        });
        return encodeResp(resp, sequence, 0, messageId);
      } catch (error) {
        return encodeResp(resp, sequence, refusalOf(error, user), '');
      }
    };

  /**
   * A submit_multi: one send to its destinations (a distribution list name is refused, the server keeps
   * none), answered with the message id and the destinations not sent, each with the status it would have had
   * alone.
   */
  async function submitMulti(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer> {
    const user = session.user!;
    const sm = fieldsOf(readSubmitMulti, pdu);
    if (!sm) return encodeSubmitMultiResp(sequence, CommandStatus.ESME_RINVCMDLEN);
    if (sm.dlNames.length > 0) return encodeSubmitMultiResp(sequence, CommandStatus.ESME_RINVDLNAME);
    if (sm.destinations.length === 0) return encodeSubmitMultiResp(sequence, CommandStatus.ESME_RINVNUMDESTS);
    const addresses = sm.destinations.map((d) => d.address);
    const ready = prepared(user, sm, addresses.join(','), addresses.length);
    if ('refused' in ready) return encodeSubmitMultiResp(sequence, ready.refused);
    if ('partId' in ready) return encodeSubmitMultiResp(sequence, 0, ready.partId);
    try {
      const sent = await deps.messages.submitMulti(user, session.clientIp, ready, addresses);
      const unsent = new Map(sent.unsuccessful.map((u) => [u.destination, u.status]));
      const unsuccess = sm.destinations.flatMap((d) => {
        const status = unsent.get(d.address);
        if (status === undefined) return [];
        // A destination given twice and refused is answered once.
        unsent.delete(d.address);
        return [{ ...d, status }];
      });
      return encodeSubmitMultiResp(sequence, 0, sent.messageId, unsuccess);
    } catch (error) {
      return encodeSubmitMultiResp(sequence, refusalOf(error, user));
    }
  }

  async function query(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer> {
    const user = session.user!;
    const sm = fieldsOf(readQuerySm, pdu);
    if (!sm) return encodeQuerySmResp(sequence, CommandStatus.ESME_RINVCMDLEN);
    if (!queryThrottle.take(user.id, deps.binds.tpsHere(user.id, user.tps)))
      return encodeQuerySmResp(sequence, CommandStatus.ESME_RTHROTTLED);
    try {
      const found = await deps.messages.query(user, sm.messageId, sm.source);
      return found
        ? encodeQuerySmResp(sequence, 0, found)
        : encodeQuerySmResp(sequence, CommandStatus.ESME_RQUERYFAIL);
    } catch (error) {
      log.warn({ err: (error as Error).message, systemId: user.systemId }, 'SMPP server: query failed');
      return encodeQuerySmResp(sequence, CommandStatus.ESME_RSYSERR);
    }
  }

  async function cancel(session: SmppSession, pdu: Buffer, sequence: number): Promise<Buffer> {
    const user = session.user!;
    const sm = fieldsOf(readCancelSm, pdu);
    if (!sm) return encodeEmpty(Command.cancelSmResp, sequence, CommandStatus.ESME_RINVCMDLEN);
    const cancelled = await deps.messages.cancel(
      user,
      session.clientIp,
      sm.messageId,
      sm.source,
      sm.destination,
    );
    return encodeEmpty(Command.cancelSmResp, sequence, cancelled ? 0 : CommandStatus.ESME_RCANCELFAIL);
  }

  const host: SessionHost = {
    log,
    async bind(session, mode, fields) {
      const ip = session.clientIp;
      if (brake.braked(ip)) return CommandStatus.ESME_RBINDFAIL;
      const result = await deps.users.authenticate(fields.systemId, fields.password, ip);
      if ('refused' in result) {
        brake.failed(ip);
        log.warn({ ip, systemId: fields.systemId, reason: result.refused }, 'SMPP server: bind refused');
        return refusalStatus[result.refused];
      }
      const { user } = result;
      const bindId = await deps.binds.claim(user.id, user.maxBinds);
      if (bindId === undefined) {
        log.warn({ ip, systemId: user.systemId, maxBinds: user.maxBinds }, 'SMPP server: max binds reached');
        return CommandStatus.ESME_RBINDFAIL;
      }
      if (!session.open) {
        deps.binds.release(bindId);
        return CommandStatus.ESME_RSYSERR;
      }
      const set = byUser.get(user.id) ?? new Set<SmppSession>();
      session.bindId = bindId;
      session.user = user;
      session.mode = mode;
      set.add(session);
      byUser.set(user.id, set);
      return 0;
    },
    bound(session) {
      if (session.receives) pump.wake();
    },
    submit: submitting(readSubmitSm, Command.submitSmResp),
    data: submitting(readDataSm, Command.dataSmResp),
    multi: submitMulti,
    query,
    cancel,
    acknowledged: (_session, rowId, status) => pump.acknowledged(rowId, status),
    closed(session) {
      sessions.delete(session);
      pump.released(session);
      if (session.bindId !== undefined) deps.binds.release(session.bindId);
      if (session.user) {
        const set = byUser.get(session.user.id);
        set?.delete(session);
        if (set?.size === 0) byUser.delete(session.user.id);
      }
    },
  };

  const accept = (socket: net.Socket) => {
    sessions.add(new SmppSession(socket, host));
  };

  async function listen(server: net.Server, host: string, port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    listeners.push(server);
    return (server.address() as AddressInfo).port;
  }

  return {
    /** Listens for plain SMPP on host:port; resolves with the port bound (0 picks one). */
    listen: (host: string, port: number) => listen(net.createServer(accept), host, port),
    /** Listens for SMPP over TLS with the PEM key and certificate files given. */
    listenTls: (host: string, port: number, files: { key: string; cert: string }) =>
      listen(
        tls.createServer({ key: readFileSync(files.key), cert: readFileSync(files.cert) }, accept),
        host,
        port,
      ),
    start(): void {
      pump.start();
      userCheck = setInterval(() => {
        closeDeleted().catch((error: Error) =>
          log.warn({ err: error.message }, 'SMPP server: checking bound users failed'),
        );
        deps.binds
          .sync()
          .catch((error: Error) =>
            log.warn({ err: error.message }, 'SMPP server: renewing the binds failed'),
          );
      }, options.userCheckMs);
      userCheck.unref();
    },
    /** Receipts or replies may be waiting: read the outbox now. */
    wake: () => pump.wake(),
    /** The ports listened on, plain first (for tests, and logs when the port given was 0). */
    ports: () => listeners.map((server) => (server.address() as AddressInfo).port),
    /** Binds up now (for tests and metrics). */
    sessions: () => [...sessions],
    /** Stops listening, unbinds nobody politely: closes every connection. */
    async close(): Promise<void> {
      pump.stop();
      if (userCheck) clearInterval(userCheck);
      await Promise.all(
        listeners.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
      for (const session of sessions) session.socket.destroy();
    },
  };
}
