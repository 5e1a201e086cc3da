// Nodes started apart find each other's work through PostgreSQL (LISTEN/NOTIFY), with no supervisor between
// them: a send accepted by a ROLE=api process wakes a ROLE=delivery process, whose receipts wake a
// ROLE=webhooks process. Every poll is set to a minute, so a DLR webhook within two seconds of its send can
// only come from wake-ups travelling through the database. Two of each role share the work, each message
// submitted once and its webhook posted once; nudge connections killed on the server come back by themselves;
// a click recorded by the API process wakes the webhooks process, and a send crossing the balance-alert trigger
// wakes its alert worker (whose alert SMS wakes the delivery process); and under the supervisor on PostgreSQL, where
// nudges travel both over IPC and through the database, a send still gets one webhook, in time.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { nudgeApplicationName } from '../../src/store/notify.ts';
import { call, createHarness, type Harness } from '../helpers/harness.ts';
import { NodeGroup, type PigeonNode } from '../helpers/nodes.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

/** Only a wake-up can bring a DLR webhook this soon: the polls are a minute apart. */
const wakeBoundMs = 2_000;

describe.skipIf(!inject('pgUrl'))('nodes apart on one PostgreSQL, woken through the database', () => {
  let h: Harness;
  let smsc: TestSmsc;
  let receiver: WebhookReceiver;
  let nodes: NodeGroup;
  let token: string;
  let schema: string;
  let counter = 0;

  beforeAll(async () => {
    h = await createHarness('postgres', { WEBHOOK_ALLOW_PRIVATE: 'true' });
    schema = new URL(h.databaseUrl).searchParams.get('schema')!;
    smsc = await new TestSmsc().listen();
    receiver = await new WebhookReceiver().listen();
    nodes = new NodeGroup({
      databaseUrl: h.databaseUrl,
      env: {
        TRANSPORT: 'smpp',
        SMPP_URL: smsc.url,
        SMPP_BINDS: '1',
        WORKER_POLL_MS: '60000',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        LEASE_SECONDS: '5',
        RATE_LIMIT_IP_RPS: '0',
      },
    });
    const account = await h.account({ credits: 10_000 });
    token = account.token;
    const hook = await call(h.app, 'POST', '/webhook', {
      token,
      json: { webhook: { type: 'DLR', url: receiver.url('/dlr') } },
    });
    expect(hook.body.status, hook.body.details).toBe(1);
  });

  afterEach(() => nodes.killAll());

  afterAll(async () => {
    await nodes?.killAll();
    await receiver?.close();
    await smsc?.close();
    await h?.close();
  });

  /** Sends one message through `api`; answers its destination number. */
  async function send(api: PigeonNode): Promise<string> {
    counter++;
    const number = `336${String(30000000 + counter)}`;
    const response = await fetch(`${api.apiUrl}/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sms: {
          message: { text: 'Across nodes', pushtype: 'alert' },
          recipients: { gsm: [{ value: number }] },
        },
      }),
    });
    const body = (await response.json()) as { status: number; details?: string };
    expect(body.status, body.details).toBe(1);
    return number;
  }

  /** The DLR webhooks posted for `number`. */
  const dlrsFor = (number: string) =>
    receiver.requests.filter(
      (r) => r.path === '/dlr' && (JSON.parse(r.body) as { destination: string }).destination === number,
    );

  async function sendAndWaitForDlr(api: PigeonNode): Promise<number> {
    const started = Date.now();
    const number = await send(api);
    await waitFor(
      () => dlrsFor(number).length > 0,
      `the DLR webhook of ${number} within ${wakeBoundMs} ms`,
      wakeBoundMs,
    );
    return Date.now() - started;
  }

  /** The process ids of the nudge connections of this test's schema. */
  async function nudgeBackends(): Promise<number[]> {
    const client = new pg.Client({ connectionString: inject('pgUrl') });
    await client.connect();
    try {
      const result = await client.query<{ pid: number }>(
        'select pid from pg_stat_activity where application_name = $1 order by pid',
        [nudgeApplicationName(schema)],
      );
      return result.rows.map((r) => r.pid);
    } finally {
      await client.end();
    }
  }

  async function terminate(pids: number[]): Promise<void> {
    const client = new pg.Client({ connectionString: inject('pgUrl') });
    await client.connect();
    try {
      await client.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]);
    } finally {
      await client.end();
    }
  }

  it('a send through a ROLE=api process gets its DLR webhook from ROLE=delivery and ROLE=webhooks processes within 2 s, with polls a minute apart', async () => {
    const [api] = await nodes.startAll(['api', 'delivery', 'webhooks']);
    for (let i = 0; i < 5; i++) await sendAndWaitForDlr(api);
    expect(receiver.requests.filter((r) => r.path === '/dlr').length).toBeGreaterThanOrEqual(5);
  }, 120_000);

  it('under the supervisor on PostgreSQL (IPC and NOTIFY both), a send still gets its DLR webhook within 2 s, once', async () => {
    const server = await nodes.start('all');
    const number = await send(server);
    await waitFor(() => dlrsFor(number).length > 0, 'the DLR webhook', wakeBoundMs);
    expect(dlrsFor(number)).toHaveLength(1);
    // Its processes stop with it (SIGKILL would leave them to notice the lost supervisor).
    expect(await server.stop()).toBe(0);
  }, 120_000);

  it('nudge connections terminated on the server are opened again by themselves, and wake their processes again', async () => {
    const [api, delivery, webhooks] = await nodes.startAll(['api', 'delivery', 'webhooks']);
    // After a send, each process holds its nudge connection: the API's to NOTIFY, the others' to LISTEN too.
    await sendAndWaitForDlr(api);
    const before = await waitFor(async () => {
      const pids = await nudgeBackends();
      return pids.length === 3 && pids;
    }, 'the three processes to hold their nudge connections');
    await terminate(before);
    const after = await waitFor(async () => {
      const pids = await nudgeBackends();
      return pids.length === 3 && pids.every((pid) => !before.includes(pid)) && pids;
    }, 'the three nudge connections to be open again');
    expect(after).toHaveLength(3);
    await sendAndWaitForDlr(api);
    expect(delivery.alive() && webhooks.alive() && api.alive()).toBe(true);
  }, 120_000);

  it('a click on a short link, recorded by a ROLE=api process, gets its CLICKER webhook from a ROLE=webhooks process within 3 s', async () => {
    const [api] = await nodes.startAll(['api', 'delivery', 'webhooks']);
    const hook = await call(h.app, 'POST', '/webhook', {
      token,
      json: { webhook: { type: 'CLICKER', url: receiver.url('/clicks') } },
    });
    expect(hook.body.status, hook.body.details).toBe(1);
    const response = await fetch(`${api.apiUrl}/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sms: {
          message: { text: 'See <-short->', pushtype: 'alert', links: ['https://shop.example/x'] },
          recipients: { gsm: [{ value: '33630999999' }] },
        },
      }),
    });
    const sent = (await response.json()) as { status: number; ticket: string };
    expect(sent.status).toBe(1);
    const link = await h.deps.store.db
      .selectFrom('links')
      .select('code')
      .where('campaign_id', '=', Number(sent.ticket))
      .executeTakeFirstOrThrow();
    const clicked = Date.now();
    const click = await fetch(`${api.linkUrl}/${link.code}`, { redirect: 'manual' });
    expect(click.status).toBe(302);
    // The fold runs half a second after the click; the dispatcher's poll is a minute away.
    await waitFor(() => receiver.requests.some((r) => r.path === '/clicks'), 'the CLICKER webhook', 3_000);
    expect(Date.now() - clicked).toBeLessThan(3_000);
  }, 120_000);

  it('a send crossing the balance-alert trigger through a ROLE=api process: its BALANCE_ALERT webhook and its alert SMS go out within 3 s', async () => {
    const [api] = await nodes.startAll(['api', 'delivery', 'webhooks']);
    const account = await h.account({ credits: 3 });
    const phone = '33631555555';
    const setting = await call(h.app, 'PUT', '/notification/balance', {
      token: account.token,
      json: { notification: { alert_trigger: '2', alert_gsm: '1', phone_number: phone } },
    });
    expect(setting.body.status, setting.body.details).toBe(1);
    const hook = await call(h.app, 'POST', '/webhook', {
      token: account.token,
      json: { webhook: { type: 'BALANCE_ALERT', url: receiver.url('/alerts') } },
    });
    expect(hook.body.status, hook.body.details).toBe(1);
    const response = await fetch(`${api.apiUrl}/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sms: {
          message: { text: 'Down to 2', pushtype: 'alert' },
          recipients: { gsm: [{ value: '33631000777' }] },
        },
      }),
    });
    expect(((await response.json()) as { status: number }).status).toBe(1);
    // The alert worker's poll and the dispatcher's are a minute away: only the nudges meet this.
    await waitFor(
      () => receiver.requests.some((r) => r.path === '/alerts'),
      'the BALANCE_ALERT webhook',
      3_000,
    );
    await waitFor(
      () => smsc.submits.some((s) => s.destination === phone),
      'the alert SMS at the SMSC',
      3_000,
    );
  }, 120_000);

  it('two API, two delivery and two webhooks processes: every message submitted once, one webhook each, both delivery processes take a share', async () => {
    const [apiA, apiB] = await nodes.startAll(['api', 'api', 'delivery', 'delivery', 'webhooks', 'webhooks']);
    const submitsBefore = smsc.submits.length;
    const size = 60;
    const numbers: string[] = [];
    // Four at a time, alternating between the two API processes.
    for (let i = 0; i < size; i += 4) {
      numbers.push(...(await Promise.all([apiA, apiB, apiA, apiB].map((api) => send(api)))));
    }
    await waitFor(
      () => numbers.every((n) => dlrsFor(n).length > 0),
      `a DLR webhook for each of the ${size} messages`,
      wakeBoundMs * 5,
    );
    // This test's own messages: an earlier test's node, killed with a message submitted but not recorded, leaves
    // it to be sent again once its lease lapses, maybe now (that is the at-least-once the kill allows).
    const mine = new Set(numbers);
    const submits = smsc.submits.slice(submitsBefore).filter((s) => mine.has(s.destination));
    expect(submits).toHaveLength(size);
    expect(new Set(submits.map((s) => s.destination)).size).toBe(size);
    for (const n of numbers) expect(dlrsFor(n)).toHaveLength(1);
    // One bind per delivery process: the SMSC tells them apart by their connection's port.
    const shares = new Map<number, number>();
    for (const s of submits) shares.set(s.clientPort, (shares.get(s.clientPort) ?? 0) + 1);
    expect(shares.size, `submits per connection: ${JSON.stringify([...shares])}`).toBe(2);
  }, 180_000);
});
