// The nudge connection sends one statement at a time: nudges of several topics in one turn wait for each other
// rather than pile up in the driver's queue (deprecated by pg, and gone in pg 9), and each is still heard.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type DatabaseNudges, postgresNudges } from '../../src/store/notify.ts';
import { waitFor } from '../helpers/wait.ts';

describe.skipIf(!inject('pgUrl'))('nudges through PostgreSQL', () => {
  const opened: DatabaseNudges[] = [];
  const query = pg.Client.prototype.query;
  afterEach(async () => {
    pg.Client.prototype.query = query;
    await Promise.all(opened.splice(0).map((nudges) => nudges.close()));
  });

  it('several topics nudged in one turn go out one statement at a time, and every topic is heard', async () => {
    const url = new URL(inject('pgUrl'));
    url.searchParams.delete('schema');
    const schema = `n_${randomBytes(6).toString('hex')}`;
    const topics = ['messages', 'events', 'alerts', 'replies'];

    // Statements in flight on each nudge connection, and the most seen at once.
    const inFlight = new Map<pg.Client, number>();
    let most = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const result = (query as (...a: unknown[]) => unknown).apply(this, args);
      if (result instanceof Promise) {
        const now = (inFlight.get(this) ?? 0) + 1;
        inFlight.set(this, now);
        most = Math.max(most, now);
        result.finally(() => inFlight.set(this, (inFlight.get(this) ?? 1) - 1)).catch(() => {});
      }
      return result;
    } as typeof query;

    const listener = postgresNudges({ connectionString: url.toString(), schema });
    const sender = postgresNudges({ connectionString: url.toString(), schema });
    opened.push(listener, sender);
    const heard = new Map<string, number>();
    for (const topic of topics) listener.listen(topic, () => heard.set(topic, (heard.get(topic) ?? 0) + 1));
    // Once listening, its own wake-up on opening has counted each topic once.
    await waitFor(() => topics.every((topic) => (heard.get(topic) ?? 0) >= 1), 'the listener to open');
    heard.clear();

    for (let round = 0; round < 5; round++) for (const topic of topics) sender.send(topic);
    await waitFor(() => topics.every((topic) => (heard.get(topic) ?? 0) >= 1), 'every topic to be heard');
    expect(most).toBe(1);
  });
});
