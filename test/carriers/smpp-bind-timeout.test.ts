// An SMSC that accepts the TCP connection but never answers the bind: the client gives the bind up after
// SMPP_BIND_TIMEOUT_MS, closes the socket, says so in a warning naming the SMSC and the cause, and tries again
// with its reconnection backoff.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Transport } from '../../src/delivery/transport.ts';
import { createTransport } from '../../src/delivery/transports.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

interface Logged {
  level: 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

function recordingLog() {
  const lines: Logged[] = [];
  const at = (level: Logged['level']) => (obj: object, msg: string) =>
    lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

/** A TCP server that accepts connections, reads what comes, and never answers. */
async function silentServer() {
  const sockets: Socket[] = [];
  const closedByClient: Socket[] = [];
  const bytes: number[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    bytes.push(0);
    const index = bytes.length - 1;
    socket.on('data', (chunk) => {
      bytes[index] += chunk.length;
    });
    socket.on('end', () => closedByClient.push(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    sockets,
    closedByClient,
    bytes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const smppConfig = (url: string, env: Record<string, string> = {}) =>
  loadConfig({ TRANSPORT: 'smpp', SMPP_URL: url, LOG_LEVEL: 'silent', ...env });

describe('SMPP bind timeout', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function started(transport: Transport): Transport {
    cleanups.push(() => transport.stop());
    return transport;
  }

  it('a bind the SMSC never answers is given up after SMPP_BIND_TIMEOUT_MS: socket closed, warning with host:port and cause, retried', async () => {
    const server = await silentServer();
    cleanups.push(server.close);
    const { lines, log } = recordingLog();
    const transport = started(
      createTransport(
        smppConfig(`smpp://pigeon:secret@127.0.0.1:${server.port}`, { SMPP_BIND_TIMEOUT_MS: '300' }),
        log,
      ),
    );
    await transport.start({ onReceipt: async () => {}, onInbound: async () => {} });

    // The first attempt sent its bind_transceiver, got nothing, and closed the connection itself.
    await waitFor(() => server.closedByClient.length >= 1, 'the client to close the unanswered connection');
    expect(server.bytes[0]).toBeGreaterThan(16);
    const warning = lines.find((l) => l.level === 'warn' && /abandoned/.test(l.msg));
    expect(warning?.msg).toBe(
      `SMPP bind to 127.0.0.1:${server.port} abandoned: no answer to bind_transceiver within 300 ms (SMPP_BIND_TIMEOUT_MS); closing the connection and retrying with backoff`,
    );
    expect(warning?.obj).toMatchObject({
      host: '127.0.0.1',
      port: server.port,
      bindTimeoutMs: 300,
      cause: 'no answer to bind_transceiver within 300 ms',
    });
    expect(transport.ready()).toBe(false);

    // And it tries again, with the reconnection backoff (500 ms, then doubling).
    await waitFor(() => server.sockets.length >= 2, 'a second bind attempt', 5000);
    await waitFor(() => server.closedByClient.length >= 2, 'the second attempt given up too', 5000);
    expect(lines.filter((l) => /abandoned/.test(l.msg)).length).toBeGreaterThanOrEqual(2);
  });

  it('an SMSC that answers the bind in time is bound as before, and no warning is logged', async () => {
    const smsc = await new TestSmsc().listen();
    cleanups.push(() => smsc.close());
    const { lines, log } = recordingLog();
    const transport = started(
      createTransport(
        smppConfig(smsc.url, { SMPP_BIND_TIMEOUT_MS: '300', SMPP_ENQUIRE_LINK_MS: '1000' }),
        log,
      ),
    );
    await transport.start({ onReceipt: async () => {}, onInbound: async () => {} });
    await waitFor(() => transport.ready(), 'the bind');
    // The first keepalive comes a second after the bind, well past the bind timeout: the connection it
    // arrives on is still the first and only one.
    let keepalives = 0;
    for (const session of smsc.sessions) session.on('enquire_link', () => keepalives++);
    await waitFor(() => keepalives >= 1, 'the first enquire_link');
    expect(transport.ready()).toBe(true);
    expect(smsc.bindAttempts).toBe(1);
    expect(lines.filter((l) => l.level !== 'info')).toEqual([]);
  });

  it('SMPP_BIND_TIMEOUT_MS defaults to 10 seconds and refuses nonsense', () => {
    expect(smppConfig('smpp://a:b@127.0.0.1:1').SMPP_BIND_TIMEOUT_MS).toBe(10_000);
    expect(() => smppConfig('smpp://a:b@127.0.0.1:1', { SMPP_BIND_TIMEOUT_MS: '5' })).toThrow(
      /SMPP_BIND_TIMEOUT_MS/,
    );
  });
});
