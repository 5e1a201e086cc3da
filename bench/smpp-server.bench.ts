// Pigeon's SMPP server against its own HTTP single send, in the same run, each on a fresh `pigeon serve`
// (ROLE=all: the supervisor and its three processes, a temp SQLite file, the carrier simulator with receipts
// at once):
//   (a) POST /send, 1 recipient, 64 connections (autocannon): requests/s;
//   (b) submit_sm over 4 transceiver binds, 100 in flight on each (a windowed client on the `smpp` package,
//       registered_delivery 1): submits/s accepted, and submit → receipt latency (submit_sm sent to the
//       deliver_sm of its receipt, through the delivery worker, the simulator and the outbox);
//   (c) the same at a fixed offered rate, a quarter of (b)'s: the receipts' latency below saturation.
// Run: npm run bench -- smpp-server    (BENCH_SMPP_SECONDS shortens or lengthens each run; default 10).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import smpp, { type Pdu, type Session } from 'smpp';
import { autocannon } from './autocannon.ts';
import { freePort, portOpen } from './pipeline/processes.ts';

const seconds = Number(process.env.BENCH_SMPP_SECONDS ?? 10);
const binds = 4;
const window = 100;
const bin = join(import.meta.dirname, '..', 'bin', 'pigeon.js');

interface Pigeon {
  env: NodeJS.ProcessEnv;
  token: string;
  apiUrl: string;
  smppPort: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startPigeon(): Promise<Pigeon> {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-smpp-bench-'));
  const [port, linkPort, smppPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    DATABASE_URL: join(dir, 'pigeon.db'),
    HOST: '127.0.0.1',
    PORT: String(port),
    LINK_PORT: String(linkPort),
    SMPP_SERVER_PORT: String(smppPort),
    SIM_DLR_DELAY_MS: '0',
    SIM_OUTCOMES: 'DELIVRD=1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_IP_RPS: '0',
  };
  const cli = (...args: string[]) => execFileSync(process.execPath, [bin, ...args], { env }).toString();
  const { token, account_id } = JSON.parse(
    cli(
      'account',
      'create',
      '--email',
      'bench@example.com',
      '--password',
      'bench-password',
      '--credits',
      '1000000000',
    ),
  ) as { token: string; account_id: string };
  cli(
    'smpp-user',
    'create',
    '--account',
    account_id,
    '--system-id',
    'bench',
    '--password',
    'bench',
    '--tps',
    '0',
  );
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const apiUrl = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ; ) {
    const up = await fetch(`${apiUrl}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up && (await portOpen(smppPort))) break;
    if (Date.now() > deadline) throw new Error('pigeon serve did not start');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    env,
    token,
    apiUrl,
    smppPort,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

async function httpRate(): Promise<number> {
  const pigeon = await startPigeon();
  try {
    const request = {
      url: `${pigeon.apiUrl}/send`,
      method: 'POST',
      headers: { authorization: `Bearer ${pigeon.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sms: {
          message: { text: 'Your code is 123456', sender: 'Bench' },
          recipients: { gsm: [{ value: '33612345678' }] },
        },
      }),
    };
    await autocannon({ ...request, connections: 16, duration: 2 });
    const r = await autocannon({ ...request, connections: 64, duration: seconds });
    console.log(
      `(a) POST /send, 1 recipient, 64 connections, ${seconds} s: ${Math.round(r.requests.average)} req/s ` +
        `(${r.requests.total} requests, non-2xx ${r.non2xx}), latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`,
    );
    return r.requests.average;
  } finally {
    await pigeon.stop();
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * submit_sm over `binds` transceivers: as fast as a window of 100 per bind allows, or at `pacedPerSecond`
 * (submits spread over 10 ms ticks), the receipts' latency measured either way.
 */
async function smppRate(pacedPerSecond?: number): Promise<number> {
  const pigeon = await startPigeon();
  const sessions: Session[] = [];
  try {
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    let accepted = 0;
    let refused = 0;
    let measuring = false;
    let running = true;
    for (let i = 0; i < binds; i++) {
      const session = smpp.connect({ host: '127.0.0.1', port: pigeon.smppPort });
      await new Promise<void>((resolve) => session.on('connect', () => resolve()));
      const bound = await new Promise<Pdu>((resolve) =>
        session.bind_transceiver({ system_id: 'bench', password: 'bench' }, resolve),
      );
      if (bound.command_status !== 0) throw new Error(`bind refused: ${bound.command_status}`);
      session.on('deliver_sm', (pdu: Pdu) => {
        session.send(pdu.response());
        const started = sentAt.get(pdu.receipted_message_id as string);
        if (started !== undefined) latencies.push(performance.now() - started);
      });
      sessions.push(session);
    }
    let n = 0;
    const submitOne = (session: Session, next?: () => void) => {
      const started = performance.now();
      session.submit_sm(
        {
          source_addr: 'Bench',
          destination_addr: `336${String(12_000_000 + (n++ % 1_000_000))}`,
          registered_delivery: 1,
          data_coding: 0,
          short_message: Buffer.from('Your code is 123456'),
        },
        (resp: Pdu) => {
          if (resp.command_status === 0) {
            if (measuring) {
              accepted++;
              sentAt.set(resp.message_id as string, started);
            }
          } else refused++;
          next?.();
        },
      );
    };
    const pump = (session: Session) => {
      if (running) submitOne(session, () => pump(session));
    };
    let ticker: NodeJS.Timeout | undefined;
    if (pacedPerSecond === undefined) {
      for (const session of sessions) for (let i = 0; i < window; i++) pump(session);
    } else {
      let owed = 0;
      let turn = 0;
      ticker = setInterval(() => {
        owed += pacedPerSecond / 100;
        for (; owed >= 1 && running; owed--) submitOne(sessions[turn++ % sessions.length]);
      }, 10);
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    measuring = true;
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    measuring = false;
    const elapsed = (performance.now() - t0) / 1000;
    running = false;
    if (ticker) clearInterval(ticker);
    // The receipts of the measured submits, up to 30 s more.
    for (const deadline = Date.now() + 30_000; latencies.length < accepted && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const rate = accepted / elapsed;
    console.log(
      (pacedPerSecond === undefined
        ? `(b) submit_sm, ${binds} transceivers × ${window} in flight, ${seconds} s: `
        : `(c) submit_sm offered at ${pacedPerSecond}/s over ${binds} transceivers, ${seconds} s: `) +
        `${Math.round(rate)} submits/s ` +
        `(${accepted} accepted, ${refused} refused); submit → receipt p50 ${Math.round(percentile(sorted, 50))} ms, ` +
        `p99 ${Math.round(percentile(sorted, 99))} ms (${latencies.length} of ${accepted} receipts in)`,
    );
    return rate;
  } finally {
    for (const session of sessions) session.destroy();
    await pigeon.stop();
  }
}

export async function run(): Promise<void> {
  const http = await httpRate();
  const smppRateValue = await smppRate();
  console.log(`SMPP / HTTP: ${(smppRateValue / http).toFixed(2)}×`);
  // The receipts' latency below saturation: a quarter of the rate just reached.
  await smppRate(Math.max(50, Math.round(smppRateValue / 4 / 50) * 50));
}
