// The memory large bodies may take: fifty clients each sending 30 MB with a valid token took the API past
// 650 MB, two permits' worth of bodies being parsed and answered. The bytes of large bodies held at once are
// bounded by LARGE_BODY_BUDGET_BYTES: a body whose declared length does not fit is refused before it is read
// (HTTP 503, the envelope, Retry-After), a chunked one as soon as its bytes pass what is left; small requests
// never wait on it. The clients below stall halfway through their bodies, so the server holds them all at once.
import { connect, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { type Config, ConfigError, loadConfig } from '../../src/config.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { describeEachDialect } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

interface Answer {
  statusLine: string;
  headers: string;
  body: Record<string, unknown>;
}

/** A client on a raw socket: it writes what it is told, and `answer` resolves with the server's first answer. */
interface Client {
  send(data: string | Buffer): void;
  answer: Promise<Answer>;
  socket: Socket;
}

const clients: Socket[] = [];

async function client(port: number): Promise<Client> {
  const socket = connect(port, '127.0.0.1');
  clients.push(socket);
  // The server closes refused requests while their client still writes: that is expected here.
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = Buffer.alloc(0);
  const answer = new Promise<Answer>((resolve, reject) => {
    const tryParse = () => {
      const text = received.toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = text.slice(0, headEnd);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      const body = Buffer.from(text.slice(headEnd + 4));
      if (body.length < length) return;
      resolve({
        statusLine: head.split('\r\n')[0],
        headers: head.toLowerCase(),
        body: JSON.parse(body.subarray(0, length).toString('utf8')),
      });
    };
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      tryParse();
    });
    socket.on('close', () => reject(new Error(`closed before a whole answer: ${received.toString()}`)));
  });
  answer.catch(() => {});
  return { send: (data) => socket.write(data), answer, socket };
}

describeEachDialect('the large bodies budget', (h) => {
  const apps: App[] = [];
  afterEach(async () => {
    for (const socket of clients.splice(0)) socket.destroy();
    for (const app of apps.splice(0)) await app.close();
  });

  const budgetBytes = 1024 * 1024;

  /** A second API over the harness's services, listening on a free port, with a 1 MiB budget. */
  async function serve(overrides: Partial<Config> = {}): Promise<{ app: App; port: number }> {
    const app = buildApi({
      config: {
        ...h().config,
        BODY_LIMIT_BYTES: budgetBytes,
        LARGE_BODY_BYTES: 64 * 1024,
        // Permits for every client: the budget alone decides who is read.
        LARGE_BODY_CONCURRENCY: 50,
        LARGE_BODY_BUDGET_BYTES: budgetBytes,
        ...overrides,
      },
      logger: h().deps.logger,
      services: h().deps.services,
    });
    apps.push(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return { app, port: address.port };
  }

  /** A POST /token body of exactly `bytes` bytes, and the head declaring it. */
  function tokenRequest(token: string, bytes: number) {
    const bare = JSON.stringify({ token: { name: 'large' }, pad: '' });
    const body = JSON.stringify({ token: { name: 'large' }, pad: 'y'.repeat(bytes - bare.length) });
    const head = `POST /token HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`;
    return { head, body };
  }

  async function small(port: number, token: string) {
    const probe = await client(port);
    probe.send(`GET /credits HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    return (await probe.answer).body;
  }

  const refusedByBudget = (answer: Answer) => {
    expect(answer.statusLine).toBe('HTTP/1.1 503 Service Unavailable');
    expect(answer.headers).toContain('retry-after: 1');
    expect(answer.body).toEqual({
      status: -99,
      message: 'Server busy',
      details: expect.stringMatching(/LARGE_BODY_BUDGET_BYTES/),
    });
  };

  it('declared bodies past the budget are refused at once with 503 and the envelope; those admitted are served, small requests keep answering', async () => {
    const a = await h().account();
    const { app, port } = await serve();
    // Signed in once, so the token is known and each large request reaches its body at once.
    expect(await small(port, a.token)).toMatchObject({ status: 1 });

    const size = 300 * 1024;
    const { head, body } = tokenRequest(a.token, size);
    const large: Client[] = [];
    for (let i = 0; i < 8; i++) {
      const c = await client(port);
      // Half the body, then the client stalls: the server holds whatever it admitted.
      c.send(head + body.slice(0, size / 2));
      large.push(c);
    }
    // Three fit in 1 MiB; the other five are answered while the three are still held.
    const refused: { c: Client; answer: Answer }[] = [];
    for (const c of large) void c.answer.then((answer) => refused.push({ c, answer }));
    await waitFor(() => refused.length === 5, 'five refusals');
    for (const { answer } of refused) refusedByBudget(answer);
    expect(app.largeBodies.inFlightBytes).toBe(3 * size);
    expect(app.largeBodies.peakBytes).toBeLessThanOrEqual(budgetBytes);

    // Small requests are not held by the budget.
    expect(await small(port, a.token)).toMatchObject({ status: 1 });

    // The three admitted send the rest of their bodies and are served.
    const admitted = large.filter((c) => !refused.some((r) => r.c === c));
    expect(admitted).toHaveLength(3);
    for (const c of admitted) c.send(body.slice(size / 2));
    for (const c of admitted) {
      expect((await c.answer).body).toMatchObject({ status: 1, token_id: expect.stringMatching(/^\d+$/) });
    }
    // Their bytes go back once they are answered: another large body fits again.
    await waitFor(() => app.largeBodies.inFlightBytes === 0, 'the budget given back');
    const next = await client(port);
    next.send(head + body);
    expect((await next.answer).body).toMatchObject({ status: 1 });
    expect(app.largeBodies.peakBytes).toBeLessThanOrEqual(budgetBytes);
  });

  it('a chunked body takes its bytes as they arrive: once past what is left it is refused with 503 and the envelope', async () => {
    const a = await h().account();
    const { app, port } = await serve();
    expect(await small(port, a.token)).toMatchObject({ status: 1 });

    // A declared body holds 800 KiB while its client stalls.
    const size = 800 * 1024;
    const { head, body } = tokenRequest(a.token, size);
    const held = await client(port);
    held.send(head + body.slice(0, 1000));
    await waitFor(() => app.largeBodies.inFlightBytes === size, 'the declared body admitted');

    const chunked = await client(port);
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    chunked.send(
      `POST /token HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    // 100 KiB fit in what is left (224 KiB)…
    chunked.send(chunk(`{"token":{"name":"chunked"},"pad":"${'z'.repeat(100 * 1024)}`));
    await waitFor(() => app.largeBodies.inFlightBytes > size, 'the first chunk taken');
    // …the next 200 KiB do not.
    chunked.send(chunk('z'.repeat(200 * 1024)));
    refusedByBudget(await chunked.answer);
    expect(app.largeBodies.peakBytes).toBeLessThanOrEqual(budgetBytes);
    await waitFor(() => app.largeBodies.inFlightBytes === size, 'the chunked body given back');

    // The declared body was never disturbed.
    held.send(body.slice(1000));
    expect((await held.answer).body).toMatchObject({ status: 1 });
    await waitFor(() => app.largeBodies.inFlightBytes === 0, 'the budget given back');
  });

  it('a budget smaller than BODY_LIMIT_BYTES, under which a body of the largest size could never be read, stops the start', () => {
    expect(() => loadConfig({ BODY_LIMIT_BYTES: String(64 * 1024 * 1024) })).toThrow(ConfigError);
    expect(() => loadConfig({ BODY_LIMIT_BYTES: String(64 * 1024 * 1024) })).toThrow(
      /LARGE_BODY_BUDGET_BYTES: must be at least BODY_LIMIT_BYTES/,
    );
    expect(
      loadConfig({
        BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
        LARGE_BODY_BUDGET_BYTES: String(64 * 1024 * 1024),
      }).LARGE_BODY_BUDGET_BYTES,
    ).toBe(64 * 1024 * 1024);
  });
});
