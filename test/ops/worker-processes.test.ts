// Delivery workers as real processes: one killed with SIGKILL mid-campaign and restarted finishes the
// campaign, sending again at most its window; two workers on one PostgreSQL never send a message twice.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'pigeon.js');
const window = 10;

describeEachDialect('delivery worker processes', (h) => {
  const children: ChildProcess[] = [];
  const smscs: TestSmsc[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    for (const smsc of smscs.splice(0)) await smsc.close();
  });

  function startWorker(smsc: TestSmsc, batchSize = 200): ChildProcess {
    const child = spawn(process.execPath, [bin, 'serve'], {
      env: {
        ...process.env,
        DATABASE_URL: h().databaseUrl,
        ROLE: 'worker',
        TRANSPORT: 'smpp',
        SMPP_URL: smsc.url,
        SMPP_BINDS: '1',
        SMPP_WINDOW: String(window),
        LEASE_SECONDS: '5',
        WORKER_POLL_MS: '20',
        WORKER_BATCH_SIZE: String(batchSize),
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  }

  async function campaign(size: number): Promise<number> {
    // The worker processes run on the system clock: messages must be due now, not at the harness's date.
    h().clock.set(Date.now());
    const a = await h().account({ credits: size });
    const recipients = Array.from({ length: size }, (_, i) => ({ value: `336${String(20000000 + i)}` }));
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'Crash test', pushtype: 'alert' }, recipients: { gsm: recipients } } },
    });
    expect(r.body.status, r.body.details).toBe(1);
    return Number(r.body.ticket);
  }

  /**
   * Messages the SMSC has accepted. Receipts for what the killed worker submitted went to its dead
   * connection, which this test SMSC does not offer again, so `submitted` counts as much as `delivered`.
   */
  const accepted = (ticket: number) => async () => {
    const row = await h()
      .deps.store.db.selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', ticket)
      .where('state', 'in', ['submitted', 'delivered'])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it('a worker killed mid-campaign leaves nothing lost, and a restart sends again at most the window', async () => {
    const smsc = await new TestSmsc().listen();
    smscs.push(smsc);
    const size = 400;
    const ticket = await campaign(size);
    const first = startWorker(smsc);
    await waitFor(() => smsc.submits.length >= 100, 'a quarter of the campaign submitted', 30_000);
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGKILL');
    await exited;
    const beforeRestart = smsc.submits.length;
    expect(beforeRestart).toBeLessThan(size);
    startWorker(smsc);
    await waitFor(
      async () => (await accepted(ticket)()) === size,
      'every message accepted by the SMSC',
      60_000,
    );
    expect(new Set(smsc.submits.map((s) => s.destination)).size).toBe(size);
    expect(smsc.submits.length - size).toBeLessThanOrEqual(window);
  }, 120_000);
  // Several processes share PostgreSQL; SQLite is the single-process default.
  it('two workers on one database submit every message exactly once', async (ctx) => {
    if (h().dialect !== 'postgres') ctx.skip();
    const smsc = await new TestSmsc().listen();
    smscs.push(smsc);
    const size = 1500;
    const ticket = await campaign(size);
    startWorker(smsc, 100);
    startWorker(smsc, 100);
    await waitFor(
      async () => (await accepted(ticket)()) === size,
      'every message accepted by the SMSC',
      60_000,
    );
    expect(smsc.submits).toHaveLength(size);
    expect(new Set(smsc.submits.map((s) => s.destination)).size).toBe(size);
    expect(new Set(smsc.submits.map((s) => s.clientPort)).size).toBe(2);
  }, 120_000);
});
