// Chaos on several nodes, nothing lost: an API, delivery and webhooks process each started alone (ROLE=api,
// delivery, webhooks, no supervisor) on a private PostgreSQL cluster this file starts itself, with a loopback
// SMSC that offers a receipt again until it is acknowledged (as carriers do) and a loopback webhook receiver.
// A delivery process killed with SIGKILL, the server restarted (`pg_ctl restart -m fast`) or stopped for a few
// seconds mid-campaign: every message ends with one final outcome and its DLR webhook, duplicates at the SMSC
// stay within the in-flight window, no process exits, and the credits spent are the cost of the accepted sends.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/cli.ts';
import { type PigeonNode, startNode } from '../helpers/nodes.ts';
import { canRunPgCluster, type PgCluster, pgQuery, startPgCluster } from '../helpers/pg-cluster.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

const window = 10;
const leaseSeconds = 3;
const available = await canRunPgCluster();

interface Topology {
  schema: string;
  env: Record<string, string>;
  api: PigeonNode;
  deliveries: PigeonNode[];
  webhooks: PigeonNode;
  token: string;
  startingCredits: number;
  smsc: TestSmsc;
  receiver: WebhookReceiver;
  /** Every process started, to check that none exited and to stop them all. */
  all: PigeonNode[];
}

/** An answer of the API over HTTP, with how long it took. */
async function request(
  t: Topology,
  method: string,
  path: string,
  json?: unknown,
): Promise<{ httpCode: number; body: { status?: number; [key: string]: unknown }; ms: number }> {
  const startedAt = Date.now();
  const response = await fetch(`${t.api.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${t.token}`,
      accept: 'application/json',
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(20_000),
  });
  const body = (await response.json()) as { status?: number };
  return { httpCode: response.status, body, ms: Date.now() - startedAt };
}

const recipients = (size: number, from: number) =>
  Array.from({ length: size }, (_, i) => ({ value: `336${String(from + i).padStart(8, '0')}` }));

/** Sends a campaign; answers its ticket. */
async function send(t: Topology, size: number, from: number): Promise<number> {
  const r = await request(t, 'POST', '/send', {
    sms: { message: { text: 'Chaos test', pushtype: 'alert' }, recipients: { gsm: recipients(size, from) } },
  });
  expect(r.body.status, JSON.stringify(r.body)).toBe(1);
  return Number(r.body.ticket);
}

describe.skipIf(!available)('chaos on several nodes, PostgreSQL [private cluster]', () => {
  let cluster: PgCluster;
  let current: Topology | undefined;

  beforeAll(async () => {
    cluster = await startPgCluster();
  }, 60_000);

  afterAll(async () => {
    await cluster?.destroy();
  });

  afterEach(async () => {
    const t = current;
    current = undefined;
    if (!t) return;
    await Promise.all(t.all.map((p) => p.kill()));
    await t.smsc.close();
    await t.receiver.close();
  });

  /** Reads on the cluster, in the topology's schema, straight from the test (the processes may be down). */
  const q = <R extends Record<string, unknown>>(t: Topology, text: string, values: unknown[] = []) =>
    pgQuery<R>(cluster.url(), text.replaceAll('$schema', t.schema), values);

  async function topology(deliveryProcesses: number): Promise<Topology> {
    const schema = `chaos_${randomBytes(5).toString('hex')}`;
    const smsc = await new TestSmsc({ redeliverReceipts: true }).listen();
    const receiver = await new WebhookReceiver().listen();
    const env = {
      DATABASE_URL: cluster.url(schema),
      PG_POOL_SIZE: '5',
      PG_CONNECT_TIMEOUT_MS: '2000',
      PG_QUERY_TIMEOUT_MS: '5000',
      LEASE_SECONDS: String(leaseSeconds),
      WORKER_POLL_MS: '20',
      WORKER_BATCH_SIZE: '100',
      TRANSPORT: 'smpp',
      SMPP_URL: smsc.url,
      SMPP_BINDS: '1',
      SMPP_WINDOW: String(window),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_IP_RPS: '0',
      METRICS: 'off',
    };
    // The API first: it migrates the schema the others then find current.
    const api = await startNode({ role: 'api', databaseUrl: env.DATABASE_URL, env });
    const startingCredits = 1_000_000;
    const token = await createAccount(
      { ...process.env, ...env, LOG_LEVEL: 'warn' },
      `chaos-${schema}@example.com`,
      startingCredits,
    );
    const started = [api];
    const t: Topology = {
      schema,
      env,
      api,
      deliveries: [],
      webhooks: api,
      token,
      startingCredits,
      smsc,
      receiver,
      all: started,
    };
    current = t;
    const hook = await request(t, 'POST', '/webhook', { webhook: { type: 'DLR', url: receiver.url() } });
    expect(hook.body.status, JSON.stringify(hook.body)).toBe(1);
    const roles = await Promise.all([
      ...Array.from({ length: deliveryProcesses }, () =>
        startNode({ role: 'delivery', databaseUrl: env.DATABASE_URL, env }),
      ),
      startNode({ role: 'webhooks', databaseUrl: env.DATABASE_URL, env }),
    ]);
    started.push(...roles);
    t.deliveries = roles.slice(0, deliveryProcesses);
    t.webhooks = roles[deliveryProcesses];
    await waitFor(() => smsc.roles.size >= deliveryProcesses, 'every delivery process bound', 30_000);
    return t;
  }

  /** Messages of the campaign in a final state. */
  const finals = async (t: Topology, ticket: number) =>
    Number(
      (
        await q<{ n: string }>(
          t,
          `select count(*) as n from $schema.messages where campaign_id = $1 and state in ('delivered', 'failed', 'expired')`,
          [ticket],
        )
      )[0].n,
    );

  /** Every message of these campaigns delivered, and a DLR webhook received for each. */
  async function everyMessageDone(t: Topology, tickets: number[], size: number, timeoutMs = 60_000) {
    await waitFor(
      async () => {
        let done = 0;
        for (const ticket of tickets) done += await finals(t, ticket).catch(() => 0);
        return done === size;
      },
      'every message with its final outcome',
      timeoutMs,
    );
    const rows = await q<{ recipient: string; state: string }>(
      t,
      'select recipient, state from $schema.messages where campaign_id = any($1)',
      [tickets],
    );
    expect(rows).toHaveLength(size);
    expect(rows.filter((r) => r.state !== 'delivered')).toEqual([]);
    // Exactly one final outcome each: one DLR event per message.
    const events = await q<{ n: string; distinct_messages: string }>(
      t,
      `select count(*) as n, count(distinct payload::json->>'destination') as distinct_messages
         from $schema.events where type = 'DLR' and campaign_id = any($1)`,
      [tickets],
    );
    expect(Number(events[0].n)).toBe(size);
    expect(Number(events[0].distinct_messages)).toBe(size);
    // At least one DLR webhook each (every recipient of these tests is a different number).
    const wanted = new Set(rows.map((r) => r.recipient));
    await waitFor(
      () => {
        const seen = new Set<string>();
        for (const r of t.receiver.requests) {
          const id = (JSON.parse(r.body) as { destination?: string }).destination;
          if (id && wanted.has(id)) seen.add(id);
        }
        return seen.size === wanted.size;
      },
      'a DLR webhook for every message',
      timeoutMs,
    );
  }

  /**
   * Credits spent equal the cost of the accepted sends: the account's balance, its ledger and its campaigns
   * agree, and the campaigns are exactly the sends the API accepted.
   */
  async function ledgerExact(t: Topology, accepted: number[]) {
    const campaigns = await q<{ id: string; cost: string }>(
      t,
      'select id, cost from $schema.campaigns order by id',
    );
    expect(campaigns.map((c) => Number(c.id))).toEqual([...accepted].sort((a, b) => a - b));
    const cost = campaigns.reduce((sum, c) => sum + Number(c.cost), 0);
    const [account] = await q<{ credits: string }>(t, 'select credits from $schema.accounts');
    expect(Number(account.credits)).toBe(t.startingCredits - cost);
    const [ledger] = await q<{ spent: string }>(
      t,
      'select coalesce(sum(delta), 0) as spent from $schema.credit_ledger where campaign_id is not null',
    );
    expect(Number(ledger.spent)).toBe(-cost);
  }

  const noneExited = (t: Topology) => expect(t.all.filter((p) => !p.alive()).map((p) => p.role)).toEqual([]);

  it('kill -9 of a delivery process mid-campaign: nothing lost, at most its window sent twice, its leases back within LEASE_SECONDS', async () => {
    const t = await topology(2);
    const size = 3000;
    const ticket = await send(t, size, 10_000_000);
    await waitFor(() => t.smsc.submits.length >= 600, 'a fifth of the campaign submitted', 30_000);
    const [victim, survivor] = t.deliveries;
    const killedAt = Date.now();
    await victim.kill();
    await everyMessageDone(t, [ticket], size);
    // The killed process's messages came back to the queue within about a lease (plus a sweep).
    const released = await survivor.waitForLog(
      (l) => l.msg?.startsWith('released messages whose worker stopped') === true,
      'the survivor releasing the dead worker’s messages',
    );
    expect(Number(released.time) - killedAt).toBeLessThanOrEqual(leaseSeconds * 1000 + 2000);
    expect(new Set(t.smsc.submits.map((s) => s.destination)).size).toBe(size);
    expect(t.smsc.submits.length - size).toBeLessThanOrEqual(window);
    t.all.splice(t.all.indexOf(victim), 1);
    noneExited(t);
    await ledgerExact(t, [ticket]);
  }, 120_000);

  it('pg_ctl restart -m fast mid-campaign: every process reconnects, every message gets its outcome and webhook, duplicates within the window', async () => {
    const t = await topology(2);
    const size = 3000;
    const ticket = await send(t, size, 20_000_000);
    await waitFor(() => t.smsc.submits.length >= 600, 'a fifth of the campaign submitted', 30_000);
    await cluster.restart();
    await everyMessageDone(t, [ticket], size);
    // Whatever went out but could not be recorded is within the window of each delivery process.
    expect(new Set(t.smsc.submits.map((s) => s.destination)).size).toBe(size);
    expect(t.smsc.submits.length - size).toBeLessThanOrEqual(window * t.deliveries.length);
    // A send after the restart goes through every process again.
    const after = await send(t, 10, 21_000_000);
    await everyMessageDone(t, [ticket, after], size + 10);
    noneExited(t);
    await ledgerExact(t, [ticket, after]);
  }, 120_000);

  it('PostgreSQL stopped for seconds mid-campaign: requests answered with the envelope within a bound, submits held to the window, all resumes', async () => {
    const t = await topology(2);
    const size = 2000;
    const accepted = [await send(t, size, 30_000_000)];
    await waitFor(() => t.smsc.submits.length >= 400, 'a fifth of the campaign submitted', 30_000);
    await cluster.stop();
    const submitsAtStop = t.smsc.submits.length;
    // While the database is away: requests answered with the envelope, none hung.
    const answers: Awaited<ReturnType<typeof request>>[] = [];
    const stoppedUntil = Date.now() + 4000;
    let n = 0;
    while (Date.now() < stoppedUntil) {
      const [credits, sent] = await Promise.all([
        request(t, 'GET', '/credits'),
        request(t, 'POST', '/send', {
          sms: {
            message: { text: 'During the outage', pushtype: 'alert' },
            recipients: { gsm: recipients(1, 31_000_000 + n++) },
          },
        }),
      ]);
      answers.push(credits, sent);
      // A send the API accepted anyway (the stop raced it) must be counted.
      if (sent.body.status === 1) accepted.push(Number(sent.body.ticket));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const submitsWhileStopped = t.smsc.submits.length - submitsAtStop;
    await cluster.start();
    const restartedAt = Date.now();
    expect(answers.length).toBeGreaterThan(4);
    for (const a of answers) {
      expect(a.ms).toBeLessThan(3000);
      expect([500, 503]).toContain(a.httpCode);
      expect(a.body.status).toBe(-99);
    }
    // While nothing could be recorded, nothing more went out than each delivery process's window.
    expect(submitsWhileStopped).toBeLessThanOrEqual(window * t.deliveries.length);
    // A send works again within seconds of the database's return.
    const again = await waitFor(
      async () => {
        const r = await request(t, 'POST', '/send', {
          sms: {
            message: { text: 'After', pushtype: 'alert' },
            recipients: { gsm: recipients(1, 32_000_000) },
          },
        });
        return r.body.status === 1 ? Number(r.body.ticket) : undefined;
      },
      'a send accepted again',
      10_000,
    );
    expect(Date.now() - restartedAt).toBeLessThan(5000);
    accepted.push(again);
    const total = size + accepted.length - 1;
    await everyMessageDone(t, accepted, total);
    expect(new Set(t.smsc.submits.map((s) => s.destination)).size).toBe(total);
    expect(t.smsc.submits.length - total).toBeLessThanOrEqual(window * t.deliveries.length);
    noneExited(t);
    await ledgerExact(t, accepted);
  }, 120_000);
});
