// What operators see of several carriers, end to end: a real delivery process (`pigeon serve`, ROLE=worker)
// with a CONNECTORS_FILE of two SMSCs sharing one weighted route sends a campaign through both; then
// `pigeon connectors`, another process, lists each connector bound, and the process's own /metrics carries
// each connector's submits, receipts and binds under its name.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { pigeonBin, pigeonOn } from '../helpers/cli.ts';
import { freePort } from '../helpers/free-port.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

/** Each `pigeon` call is a process of its own: seconds on a loaded machine. */
const cliTestMs = 90_000;

describeEachDialect('operators and several connectors', (h) => {
  const children: ChildProcess[] = [];
  const smscs: TestSmsc[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    for (const smsc of smscs.splice(0)) await smsc.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'pigeon connectors lists both connectors of a running delivery process, and its metrics count each one under its name',
    async () => {
      const alpha = await new TestSmsc().listen();
      const beta = await new TestSmsc().listen();
      smscs.push(alpha, beta);
      const dir = mkdtempSync(join(tmpdir(), 'pigeon-operators-'));
      dirs.push(dir);
      const file = join(dir, 'connectors.yaml');
      writeFileSync(
        file,
        [
          'connectors:',
          `  - { name: alpha, url: "${alpha.url}", binds: 1, window: 10 }`,
          `  - { name: beta, url: "${beta.url}", binds: 2, window: 10 }`,
          'routes:',
          '  - { name: shared, connectors: [alpha, beta], strategy: weighted, weights: [1, 1] }',
          '',
        ].join('\n'),
      );
      const metricsPort = await freePort();
      const child = spawn(process.execPath, [pigeonBin, 'serve'], {
        env: {
          ...process.env,
          DATABASE_URL: h().databaseUrl,
          ROLE: 'worker',
          CONNECTORS_FILE: file,
          METRICS_HOST: '127.0.0.1',
          METRICS_PORT: String(metricsPort),
          WORKER_POLL_MS: '20',
          LOG_LEVEL: 'error',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);

      // Both connectors as the delivery process publishes them, once both are bound.
      const bothBound = async () => {
        const r = await pigeonOn(h().databaseUrl, 'connectors', '--json');
        if (r.code !== 0) return undefined;
        const lines = r.stdout
          .trim()
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line));
        return lines.length === 2 && lines.every((row) => row.state === 'bound') ? lines : undefined;
      };
      // Sent once both are bound: a send before would all go through the first one up.
      await waitFor(bothBound, 'both connectors bound', 60_000);

      // The child runs on the system clock: the messages must be due now.
      h().clock.set(Date.now());
      const account = await h().account({ credits: 100 });
      const gsm = Array.from({ length: 20 }, (_, i) => ({ value: `336123401${String(i).padStart(2, '0')}` }));
      const sent = await call(h().app, 'POST', '/send', {
        token: account.token,
        json: { sms: { message: { text: 'Two carriers', pushtype: 'alert' }, recipients: { gsm } } },
      });
      expect(sent.body.status, sent.body.details).toBe(1);
      await waitFor(
        () => alpha.submits.length + beta.submits.length === 20,
        'the 20 messages at the two SMSCs',
        60_000,
      );
      // Weighted 1:1: both carriers take a share.
      expect(alpha.submits.length).toBeGreaterThan(0);
      expect(beta.submits.length).toBeGreaterThan(0);

      const rows = await waitFor(bothBound, 'both connectors published as bound', 60_000);
      expect(rows.map((row) => [row.name, row.role, row.binds_up, row.binds_total, row.window_size])).toEqual(
        [
          ['alpha', 'worker', 1, 1, 10],
          ['beta', 'worker', 2, 2, 20],
        ],
      );
      const table = await pigeonOn(h().databaseUrl, 'connectors');
      expect(table.stdout).toMatch(/alpha\s+\S+ \(worker\)\s+bound\s+1\/1\s+\d+\/10\s/);
      expect(table.stdout).toMatch(/beta\s+\S+ \(worker\)\s+bound\s+2\/2\s+\d+\/20\s/);

      // Receipts come back right behind each answer: once all 20 are recorded, each connector's series add up.
      const scrape = async () => {
        const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        return parseExposition(await response.text());
      };
      const count = (metrics: Awaited<ReturnType<typeof scrape>>, name: string, connector: string) =>
        sampleValue(metrics, name, {
          connector,
          ...(name.includes('submits') ? { outcome: 'accepted' } : {}),
        }) ?? 0;
      const metrics = await waitFor(
        async () => {
          const m = await scrape().catch(() => undefined);
          if (!m) return undefined;
          const receipts =
            count(m, 'pigeon_delivery_receipts_total', 'alpha') +
            count(m, 'pigeon_delivery_receipts_total', 'beta');
          return receipts === 20 ? m : undefined;
        },
        'the 20 receipts counted by connector',
        60_000,
      );
      expect(count(metrics, 'pigeon_delivery_submits_total', 'alpha')).toBe(alpha.submits.length);
      expect(count(metrics, 'pigeon_delivery_submits_total', 'beta')).toBe(beta.submits.length);
      expect(count(metrics, 'pigeon_delivery_receipts_total', 'alpha')).toBe(alpha.submits.length);
      expect(count(metrics, 'pigeon_delivery_receipts_total', 'beta')).toBe(beta.submits.length);
      expect(sampleValue(metrics, 'pigeon_smpp_binds_up', { connector: 'alpha' })).toBe(1);
      expect(sampleValue(metrics, 'pigeon_smpp_binds_up', { connector: 'beta' })).toBe(2);
      // Nothing counted under the one-connector name: every outcome was named by the router.
      expect(
        sampleValue(metrics, 'pigeon_delivery_submits_total', {
          connector: 'default',
          outcome: 'accepted',
        }) ?? 0,
      ).toBe(0);
    },
    cliTestMs,
  );
});
