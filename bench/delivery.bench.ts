// End to end: one campaign of 20,000 recipients from POST /send to the last receipt recorded, with the
// real `pigeon serve` (API and worker in one process) in a child process, on a temp SQLite file:
//   (a) through SMPP to a loopback SMSC in this process that answers each submit and its receipt at once;
//   (b) through the built-in simulator with receipts at once;
//   (c) as (a), over two SMSCs sharing the same binds and window through CONNECTORS_FILE (weighted).
// Run: npm run bench -- delivery    (BENCH_DELIVERY_RECIPIENTS changes the size).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';
import { TestSmsc } from '../test/helpers/smsc.ts';

const bin = join(import.meta.dirname, '..', 'bin', 'pigeon.js');
const recipients = Number(process.env.BENCH_DELIVERY_RECIPIENTS ?? 20_000);

function pigeon(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`pigeon ${args[0]} exited ${code}`)),
    );
  });
}

async function serve(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  // BENCH_DELIVERY_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server.
  const flags = (process.env.BENCH_DELIVERY_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...flags, bin, 'serve'], {
    env: { ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'API listening' && entry.url) resolve(entry.url);
      } catch {
        // Not a log line.
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, url };
}

async function measure(label: string, transportEnv: NodeJS.ProcessEnv): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-bench-delivery-'));
  const env = {
    ...process.env,
    DATABASE_URL: join(dir, 'pigeon.db'),
    PORT: '0',
    LINK_PORT: '0',
    LOG_LEVEL: 'warn',
    WORKER_POLL_MS: '10',
    ...transportEnv,
  };
  const { token } = JSON.parse(
    await pigeon(
      [
        'account',
        'create',
        '--email',
        'bench@example.com',
        '--password',
        'benchmark!',
        '--credits',
        String(recipients * 2),
      ],
      env,
    ),
  ) as { token: string };
  const { child, url } = await serve(env);
  const db = new BetterSqlite3(env.DATABASE_URL, { readonly: true });
  db.pragma('busy_timeout = 5000');
  // Final states: the simulator fails numbers ending in 0000-0002 on purpose (NPAI, rejected, expired).
  const final = db.prepare(
    "select count(*) as n from messages where state in ('delivered', 'failed', 'expired')",
  );
  const gsm = Array.from({ length: recipients }, (_, i) => ({
    value: `336${String(10000000 + i)}`,
    gsmsmsid: `b${i}`,
  }));
  const body = JSON.stringify({
    sms: { message: { text: 'Benchmark message from Pigeon', pushtype: 'alert' }, recipients: { gsm } },
  });

  const started = performance.now();
  const response = await fetch(`${url}/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  const result = (await response.json()) as { status: number; sent: number; details?: string };
  if (result.status !== 1) throw new Error(`send refused: ${result.details}`);
  const accepted = performance.now();
  while ((final.get() as { n: number }).n < recipients)
    await new Promise((resolve) => setTimeout(resolve, 20));
  const done = performance.now();

  const seconds = (done - started) / 1000;
  const states = db
    .prepare('select state, count(*) as n from messages group by state order by state')
    .all() as { state: string; n: number }[];
  console.log(
    `${label}: ${recipients} messages, POST ${(accepted - started).toFixed(0)} ms, last receipt after ${seconds.toFixed(2)} s: ` +
      `${Math.round(recipients / seconds)} messages/s (target >= 5,000); ${states.map((r) => `${r.n} ${r.state}`).join(', ')}`,
  );
  db.close();
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  rmSync(dir, { recursive: true, force: true });
}

export async function run(): Promise<void> {
  const only = process.env.BENCH_DELIVERY_ONLY;
  if (only !== 'smpp')
    await measure('simulator', { TRANSPORT: 'simulator', SIM_DLR_DELAY_MS: '0', SIM_OUTCOMES: 'DELIVRD=1' });
  if (only === 'simulator') return;
  const smsc = await new TestSmsc({ receipts: 'text' }).listen();
  await measure('SMPP, 4 binds x window 100', {
    TRANSPORT: 'smpp',
    SMPP_URL: smsc.url,
    SMPP_BINDS: '4',
    SMPP_WINDOW: '100',
  });
  console.log(`  (the SMSC saw ${smsc.submits.length} submits)`);
  await smsc.close();

  // The same binds and window over two SMSCs, shared by weight through CONNECTORS_FILE: what routing costs.
  const smscA = await new TestSmsc({ receipts: 'text' }).listen();
  const smscB = await new TestSmsc({ receipts: 'text' }).listen();
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-bench-connectors-'));
  const file = join(dir, 'connectors.json');
  const connector = (name: string, url: string) => ({ name, url, binds: 2, window: 100 });
  writeFileSync(
    file,
    JSON.stringify({
      connectors: [connector('a', smscA.url), connector('b', smscB.url)],
      routes: [{ name: 'all', connectors: ['a', 'b'], strategy: 'weighted' }],
    }),
  );
  await measure('SMPP, two connectors of 2 binds x window 100, weighted', { CONNECTORS_FILE: file });
  console.log(`  (the SMSCs saw ${smscA.submits.length} and ${smscB.submits.length} submits)`);
  await smscA.close();
  await smscB.close();
  rmSync(dir, { recursive: true, force: true });
}
