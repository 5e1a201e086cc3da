// SHUTDOWN_TIMEOUT: a graceful stop that cannot finish in time ends with a non-zero exit and a log line naming
// what was still running. Real `pigeon serve` processes, with a webhook delivery in flight to a receiver that
// never answers: the webhook dispatcher's stop waits for it (2 s of grace), longer than the 1 s allowed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pigeonBin as bin, createAccount } from '../helpers/cli.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

interface LogLine {
  msg?: string;
  url?: string;
  apiUrl?: string;
  unfinished?: string[];
  roles?: string[];
  timeoutMs?: number;
}

/** Starts `pigeon serve` and collects its JSON log lines. */
function startServer(env: NodeJS.ProcessEnv) {
  const server = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: LogLine[] = [];
  createInterface({ input: server.stdout! }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // Not a log line.
    }
  });
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  return { server, lines, exited };
}

describe('SHUTDOWN_TIMEOUT', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-shutdown-'));
  let receiver: WebhookReceiver;
  const servers: ChildProcess[] = [];

  beforeAll(async () => {
    receiver = await new WebhookReceiver().listen();
    receiver.answer = () => ({ hang: true });
  });

  // A server a failed test left running is stopped with SIGTERM, so a supervisor stops its role processes too
  // (SIGKILL would leave them running); it is killed if it is still there after its deadline.
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      if (server.exitCode !== null || server.signalCode !== null) continue;
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      const killer = setTimeout(() => server.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
  });

  afterAll(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a server, gets a webhook delivery hanging in it, and stops it with SIGTERM. */
  async function stopWithDeliveryInFlight(name: string, processes: 'one' | 'per-role') {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: join(dir, `${name}.db`),
      PORT: '0',
      LINK_PORT: '0',
      LOG_LEVEL: 'info',
      PROCESSES: processes,
      SHUTDOWN_TIMEOUT: '1s',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_TIMEOUT_MS: '60000',
      WORKER_POLL_MS: '50',
    };
    const token = await createAccount(env, `${name}@example.com`, 5);
    const { server, lines, exited } = startServer(env);
    servers.push(server);
    const listening = await waitFor(
      () => lines.find((l) => l.msg === 'API listening'),
      'the API to listen',
      // Three processes compiling TypeScript at once are slow on a busy machine.
      60_000,
    );
    const api = String(listening.url);
    const post = async (path: string, body: unknown) =>
      (await (
        await fetch(`${api}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as { status: number; webhook?: { webhook_id: string } };
    const created = await post('/webhook', { webhook: { type: 'DLR', url: receiver.url(`/${name}`) } });
    expect(created.status).toBe(1);
    const before = receiver.requests.length;
    expect((await post(`/webhook/${created.webhook!.webhook_id}/test`, {})).status).toBe(1);
    await waitFor(() => receiver.requests.length > before, 'the delivery to reach the receiver');

    server.kill('SIGTERM');
    return { code: await exited, lines };
  }

  it('`pigeon serve` (one process) exits 1 past SHUTDOWN_TIMEOUT, naming the step still running', async () => {
    const { code, lines } = await stopWithDeliveryInFlight('one', 'one');
    expect(code).toBe(1);
    const report = lines.find((l) => l.msg?.startsWith('shutdown did not finish within SHUTDOWN_TIMEOUT'));
    expect(report).toBeDefined();
    expect(report!.timeoutMs).toBe(1000);
    // The steps before it (the delivery worker, …) finished; the dispatcher and what follows it did not.
    expect(report!.unfinished?.[0]).toBe('webhook dispatcher');
    expect(report!.unfinished).toEqual(expect.arrayContaining(['API server', 'database']));
    expect(report!.unfinished).not.toContain('delivery worker');
  }, 120_000);

  it('the supervisor exits 1 when a role process overran SHUTDOWN_TIMEOUT, naming the role and its step', async () => {
    const { code, lines } = await stopWithDeliveryInFlight('supervised', 'per-role');
    expect(code).toBe(1);
    const roleReport = lines.find((l) =>
      l.msg?.startsWith('shutdown did not finish within SHUTDOWN_TIMEOUT'),
    );
    expect(roleReport?.unfinished?.[0]).toBe('webhook dispatcher');
    const supervisorReport = lines.find((l) => l.msg === 'Pigeon processes did not stop cleanly; exiting');
    expect(supervisorReport?.roles).toEqual(['webhooks']);
  }, 120_000);
});
