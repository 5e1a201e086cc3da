// `pigeon serve` with ROLE=all runs one process per role under a supervisor: a send accepted by the API
// process is submitted by the delivery process and its receipt posted by the webhooks process, each woken by
// the other's nudge (their polls are set to a minute, so nothing else could wake them in time); a role process
// killed with SIGKILL is started again and the server goes on; SIGTERM stops every process.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pigeonBin as bin, createAccount } from '../helpers/cli.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

interface LogLine {
  msg?: string;
  pid?: number;
  apiUrl?: string;
  processes?: string[];
  role?: string;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('pigeon serve: one process per role', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-supervisor-'));
  const lines: LogLine[] = [];
  let env: NodeJS.ProcessEnv;
  let server: ChildProcess;
  let receiver: WebhookReceiver;
  let token: string;
  let apiUrl: string;
  let pids: Record<string, number>;

  const readies = () => lines.filter((l) => l.msg === 'Pigeon ready');
  const rolePids = (line: LogLine) =>
    Object.fromEntries(
      (line.processes ?? []).map((p) => p.split(':')).map(([role, pid]) => [role, Number(pid)]),
    );

  async function send(numbers: string[]): Promise<void> {
    const response = await fetch(`${apiUrl}/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sms: {
          message: { text: 'Supervised', pushtype: 'alert' },
          recipients: { gsm: numbers.map((value) => ({ value })) },
        },
      }),
    });
    expect(((await response.json()) as { status: number }).status).toBe(1);
  }

  const receipts = () => receiver.requests.filter((r) => r.path === '/dlr').length;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().listen();
    env = {
      ...process.env,
      DATABASE_URL: join(dir, 'pigeon.db'),
      PORT: '0',
      LINK_PORT: '0',
      ROLE: 'all',
      PROCESSES: 'per-role',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      SIM_DLR_DELAY_MS: '0',
      SIM_OUTCOMES: 'DELIVRD=1',
      WORKER_POLL_MS: '60000',
      LOG_LEVEL: 'info',
    };
    server = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    createInterface({ input: server.stdout! }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line.
      }
    });
    const ready = await waitFor(() => readies()[0], 'every role to serve', 60_000);
    apiUrl = ready.apiUrl!;
    pids = rolePids(ready);
    token = await createAccount(env, 'roles@example.com', 20);
    const hook = await fetch(`${apiUrl}/webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: { type: 'DLR', url: receiver.url('/dlr') } }),
    });
    expect(((await hook.json()) as { status: number }).status).toBe(1);
  }, 90_000);

  afterAll(async () => {
    if (server.exitCode === null) server.kill('SIGKILL');
    for (const pid of Object.values(pids ?? {})) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the API, the delivery worker and the webhook dispatcher in three processes besides its own', () => {
    expect(Object.keys(pids).sort()).toEqual(['api', 'delivery', 'webhooks']);
    const distinct = new Set([server.pid, ...Object.values(pids)]);
    expect(distinct.size).toBe(4);
    for (const pid of Object.values(pids)) expect(alive(pid)).toBe(true);
  });

  it('the delivery process runs with WORKER_HEAP_MB as its old-space limit, the API and webhooks ones with the default', () => {
    const flags = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(flags(pids.delivery)).toContain('--max-old-space-size=128');
    expect(flags(pids.webhooks).some((f) => f.startsWith('--max-old-space-size'))).toBe(false);
    expect(flags(pids.api).some((f) => f.startsWith('--max-old-space-size'))).toBe(false);
  });

  it('a send crosses the three processes: submitted, received, and its DLR webhook posted, woken by nudges', async () => {
    await send(['33612000001', '33612000002']);
    // Polls are a minute apart: the receipts arrive within seconds only if the nudges went through.
    await waitFor(() => receipts() === 2, 'two DLR webhooks', 20_000);
  });

  it('a role process killed with SIGKILL is started again, and the server goes on', async () => {
    process.kill(pids.delivery, 'SIGKILL');
    await waitFor(() => readies().length === 2, 'the delivery process to serve again', 60_000);
    const again = rolePids(readies()[1]);
    expect(again.delivery).not.toBe(pids.delivery);
    expect(again.api).toBe(pids.api);
    expect(
      lines.some((l) => l.msg === 'a Pigeon process stopped; restarting it' && l.role === 'delivery'),
    ).toBe(true);
    pids = again;
    await send(['33612000003']);
    await waitFor(() => receipts() === 3, 'the third DLR webhook', 20_000);
  }, 90_000);

  it('a server whose API cannot start (its port taken) stops every process and exits 1', async () => {
    const port = new URL(apiUrl).port;
    const second = spawn(process.execPath, [bin, 'serve'], {
      env: { ...env, DATABASE_URL: join(dir, 'second.db'), PORT: port, LOG_LEVEL: 'fatal' },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
  }, 60_000);

  it('SIGTERM stops every process, and the supervisor exits 0', async () => {
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of Object.values(pids)) expect(alive(pid)).toBe(false);
  }, 60_000);
});
