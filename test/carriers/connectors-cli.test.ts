// `pigeon connectors`: a delivery process (a real `pigeon serve` child) publishes its connectors' status
// to the database, and the command, another process, prints it: bound with its window in use, then down with
// the last error once the SMSC closes, stale when the publisher stopped writing, gone when it stopped.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { liveForMs } from '../../src/delivery/connector-status.ts';
import { pigeonBin, pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

/** Each `pigeon` call is a process of its own: seconds on a loaded machine. */
const cliTestMs = 90_000;

describeEachDialect('pigeon connectors', (h) => {
  const children: ChildProcess[] = [];
  const smscs: TestSmsc[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    for (const smsc of smscs.splice(0)) await smsc.close();
  });

  function startDelivery(smsc: TestSmsc): ChildProcess {
    const child = spawn(process.execPath, [pigeonBin, 'serve'], {
      env: {
        ...process.env,
        DATABASE_URL: h().databaseUrl,
        ROLE: 'worker',
        TRANSPORT: 'smpp',
        SMPP_URL: smsc.url,
        SMPP_BINDS: '1',
        SMPP_WINDOW: '10',
        // The held submits wait for their answer longer than the test.
        SMPP_RESPONSE_TIMEOUT_MS: '300000',
        WORKER_POLL_MS: '20',
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  }

  const published = async (name: string) =>
    (await h().deps.services.connectors.connectorStatus()).filter((row) => row.name === name);

  async function connectorsJson() {
    const r = await pigeonOn(h().databaseUrl, 'connectors', '--json');
    expect(r.code, r.stderr).toBe(0);
    return r.stdout
      .trim()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
  }

  it(
    'shows the connector bound with its window in use, then down with the last error after the SMSC closes, and nothing once the process stopped',
    async () => {
      const smsc = await new TestSmsc().listen();
      smscs.push(smsc);
      smsc.holdResponses = true;
      const child = startDelivery(smsc);
      // The child runs on the system clock: the messages must be due now.
      h().clock.set(Date.now());
      const a = await h().account({ credits: 10 });
      const sent = await call(h().app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Status check', pushtype: 'alert' },
            recipients: {
              gsm: [{ value: '33612340001' }, { value: '33612340002' }, { value: '33612340003' }],
            },
          },
        },
      });
      expect(sent.body.status, sent.body.details).toBe(1);
      await waitFor(
        async () => (await published('default'))[0]?.windowInUse === 3,
        'three submits awaiting their answer, published',
        30_000,
      );

      // The state holds still while the SMSC holds its answers: both forms are asked at once.
      const [[bound], table] = await Promise.all([connectorsJson(), pigeonOn(h().databaseUrl, 'connectors')]);
      expect(bound).toMatchObject({
        name: 'default',
        role: 'worker',
        kind: 'smpp',
        state: 'bound',
        binds_up: 1,
        binds_total: 1,
        window_in_use: 3,
        window_size: 10,
        last_error: null,
        last_error_at: null,
      });
      expect(bound.instance).toMatch(/:\d+$/);
      expect(typeof bound.pps).toBe('number');
      expect(table.stdout).toMatch(/^CONNECTOR\s+PROCESS\s+STATE\s+BINDS\s+WINDOW\s+PPS\s+LAST ERROR/);
      expect(table.stdout).toMatch(/default\s+\S+ \(worker\)\s+bound\s+1\/1\s+3\/10\s+\d+\.\d\s+-/);

      const closedAt = Date.now();
      await smsc.close();
      smscs.splice(0);
      await waitFor(
        async () => (await published('default'))[0]?.state === 'down',
        'the connector published as down',
        30_000,
      );
      const [[down], downTable] = await Promise.all([
        connectorsJson(),
        pigeonOn(h().databaseUrl, 'connectors'),
      ]);
      expect(down).toMatchObject({ name: 'default', state: 'down', binds_up: 0, window_in_use: 0 });
      expect(down.last_error).toEqual(expect.any(String));
      expect(down.last_error).toMatch(/closed|ECONNREFUSED/);
      expect(Date.parse(down.last_error_at)).toBeGreaterThanOrEqual(closedAt - 1000);
      expect(downTable.stdout).toMatch(
        /default\s+\S+ \(worker\)\s+down\s+0\/1\s+0\/10\s+\S+\s+\d{4}-\d\d-\d\dT\S+Z \S/,
      );

      // A process that stops removes its rows: the command then has nothing to show and says why.
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      expect(await published('default')).toEqual([]);
      const empty = await pigeonOn(h().databaseUrl, 'connectors');
      expect(empty.code).toBe(0);
      expect(empty.stdout).toBe('');
      expect(empty.stderr).toContain('no delivery process');
    },
    cliTestMs,
  );

  it(
    'a row its process stopped rewriting is shown as stale, the live ones as they are',
    async () => {
      const now = Date.now();
      const row = {
        kind: 'smpp' as const,
        role: 'delivery',
        bindsUp: 2,
        bindsTotal: 2,
        state: 'bound' as const,
        windowInUse: 1,
        windowSize: 20,
        pps: 12.5,
        lastError: null,
        lastErrorAt: null,
      };
      await h().deps.services.connectors.saveConnectorStatus([
        { ...row, name: 'carrier-a', instance: 'gone:1', updatedAt: now - liveForMs - 5_000 },
        { ...row, name: 'carrier-a', instance: 'alive:2', updatedAt: now },
        { ...row, name: 'carrier-b', instance: 'alive:2', updatedAt: now, state: 'connecting', bindsUp: 0 },
      ]);
      try {
        const rows = (await connectorsJson()).filter((r) => r.name.startsWith('carrier-'));
        expect(rows.map((r) => [r.name, r.instance, r.state])).toEqual([
          ['carrier-a', 'alive:2', 'bound'],
          ['carrier-a', 'gone:1', 'stale'],
          ['carrier-b', 'alive:2', 'connecting'],
        ]);
        expect(rows[0]).toMatchObject({ pps: 12.5, window_in_use: 1, window_size: 20, binds_up: 2 });
      } finally {
        await h().deps.services.connectors.removeConnectorStatus('gone:1');
        await h().deps.services.connectors.removeConnectorStatus('alive:2');
      }
    },
    cliTestMs,
  );
});
