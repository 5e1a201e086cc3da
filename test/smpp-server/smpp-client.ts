// The `smpp` package as an independent ESME against Pigeon's SMPP server: binds, submits and the deliver_sm
// it receives, each answered.
import smpp, { type Pdu, type Session } from 'smpp';
import { type BindRegistry, createBindRegistry } from '../../src/smpp-server/smpp-binds.ts';
import { createSmppServer, type SmppServer } from '../../src/smpp-server/smpp-server.ts';
import type { Harness } from '../helpers/harness.ts';

export interface Esme {
  session: Session;
  /** deliver_sm received, in order (each answered with status 0 unless `refuseDeliveries`). */
  delivered: Pdu[];
  closed: boolean;
  request(command: string, fields?: Record<string, unknown>): Promise<Pdu>;
  close(): Promise<void>;
}

export function connectEsme(port: number): Promise<Esme> {
  return new Promise((resolve, reject) => {
    const session = smpp.connect({ host: '127.0.0.1', port }, () => {
      session.off('error', reject);
      const esme: Esme = {
        session,
        delivered: [],
        closed: false,
        request(command, fields = {}) {
          return new Promise((done) => {
            (session as unknown as Record<string, (f: object, cb: (pdu: Pdu) => void) => void>)[command](
              fields,
              done,
            );
          });
        },
        close() {
          return new Promise((done) => {
            if (esme.closed) return done();
            session.destroy(() => done());
          });
        },
      };
      session.on('deliver_sm', (pdu: Pdu) => {
        esme.delivered.push(pdu);
        session.send(pdu.response());
      });
      session.on('error', () => {});
      session.on('close', () => {
        esme.closed = true;
      });
      resolve(esme);
    });
    session.once('error', reject);
  });
}

/** Connects and binds; the bind's answer beside the ESME. */
export async function bindEsme(
  port: number,
  mode: 'transceiver' | 'transmitter' | 'receiver',
  systemId: string,
  password: string,
): Promise<{ esme: Esme; resp: Pdu }> {
  const esme = await connectEsme(port);
  const resp = await esme.request(`bind_${mode}`, { system_id: systemId, password });
  return { esme, resp };
}

/** How long a test server's bind counts after its last renewal (on the harness's clock). */
export const bindTtlMs = 15_000;

/** Pigeon's SMPP server on the harness's services, on a free loopback port, polling its outbox fast. */

export async function startSmppServer(
  h: Harness,
  options: { brakeFailures?: number } = {},
): Promise<{ server: SmppServer; port: number; binds: BindRegistry }> {
  const binds = createBindRegistry({ ...h.deps.store, clock: h.clock, ttlMs: bindTtlMs });
  const server = createSmppServer({
    users: h.deps.services.smppUsers,
    messages: h.deps.services.smppMessages,
    binds,
    clock: h.clock,
    log: { info() {}, warn() {} },
    options: {
      brakeFailures: options.brakeFailures ?? 0,
      brakeWindowMs: 60_000,
      pollMs: 20,
      concatTtlMs: 60_000,
      userCheckMs: 20,
    },
  });
  const port = await server.listen('127.0.0.1', 0);
  server.start();
  return { server, port, binds };
}
