// DAILY_MESSAGE_LIMIT: the messages an account may have accepted per day of TIMEZONE, exact under
// concurrency, refused with -7 and details when a send would pass it.
import { afterAll, expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { type SecondInstance, secondInstance } from '../helpers/second-instance.ts';

const fr = (n: number) => `336${String(12345600 + n).padStart(8, '0')}`;
const numbers = (count: number, from = 0) => Array.from({ length: count }, (_, i) => fr(from + i));

/** 2026-01-05 10:00 in Paris (09:00 UTC). */
const mondayMorning = Date.UTC(2026, 0, 5, 9, 0, 0);
/** 2026-01-06 00:00 in Paris: 23:00 UTC the day before. */
const tuesdayMidnightParis = Date.UTC(2026, 0, 5, 23, 0, 0);

const send = (app: Harness['app'], a: TestAccount, to: string[], path = '/send') =>
  call(app, 'POST', path, {
    token: a.token,
    json: { sms: { message: { text: 'Hello' }, recipients: { gsm: to.map((value) => ({ value })) } } },
  });

const countsOf = (h: Harness, a: TestAccount) =>
  h.deps.store.db
    .selectFrom('daily_message_counts')
    .select(['day', 'messages'])
    .where('account_id', '=', a.id)
    .orderBy('day')
    .execute();

describeEachDialect(
  'daily message cap',
  (h) => {
    const others: SecondInstance[] = [];
    afterAll(async () => {
      for (const other of others) await other.close();
    });

    it('sends are accepted up to the limit exactly; the one that would cross it is -7 with the limit, the day and the counts', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      expect((await send(h().app, a, numbers(3))).body).toMatchObject({ status: 1, sent: 3 });
      const refused = await send(h().app, a, numbers(3, 10));
      expect(refused.body).toEqual({
        status: -7,
        message: 'Data error',
        details: `DAILY_MESSAGE_LIMIT: account ${a.id} may have 5 messages accepted per day; 3 were accepted today (2026-01-05, Europe/Paris) and this send has 3, 1 too many`,
      });
      expect((await send(h().app, a, numbers(2, 20))).body).toMatchObject({ status: 1, sent: 2 });
      expect((await send(h().app, a, numbers(1, 30))).body.status).toBe(-7);
      expect(await countsOf(h(), a)).toEqual([{ day: '2026-01-05', messages: 5 }]);
      // Refused sends stored and charged nothing.
      const campaigns = await h()
        .deps.store.db.selectFrom('campaigns')
        .select('id')
        .where('account_id', '=', a.id)
        .execute();
      expect(campaigns).toHaveLength(2);
      expect(await h().deps.services.credits.credits(a.id)).toBe(995);
    });

    it('a send larger than the limit on its own is refused', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      const r = await send(h().app, a, numbers(6));
      expect(r.body.details).toContain(
        '0 were accepted today (2026-01-05, Europe/Paris) and this send has 6',
      );
      expect(await countsOf(h(), a)).toEqual([]);
    });

    it('only messages count: invalid, repeated and blacklisted recipients do not', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      await call(h().app, 'POST', '/blacklist', {
        token: a.token,
        json: { blacklist: { contacts: { gsm: [{ value: fr(3) }] } } },
      });
      const r = await send(h().app, a, [fr(1), fr(1), '12', fr(2), fr(3), fr(4), fr(5), fr(6)]);
      expect(r.body).toMatchObject({ status: 1, sent: 5, duplicated: 1, invalid: 1, blacklisted: 1 });
      expect(await countsOf(h(), a)).toEqual([{ day: '2026-01-05', messages: 5 }]);
    });

    it('the count starts again at midnight in TIMEZONE, not in UTC', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      expect((await send(h().app, a, numbers(5))).body.status).toBe(1);
      // 23:59:59 in Paris: still Monday.
      h().clock.set(tuesdayMidnightParis - 1000);
      expect((await send(h().app, a, numbers(1, 10))).body.status).toBe(-7);
      h().clock.set(tuesdayMidnightParis);
      expect((await send(h().app, a, numbers(5, 20))).body).toMatchObject({ status: 1, sent: 5 });
      expect(await countsOf(h(), a)).toEqual([
        { day: '2026-01-05', messages: 5 },
        { day: '2026-01-06', messages: 5 },
      ]);
    });

    it('concurrent sends never pass the limit: exactly five one-message sends of ten are accepted', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      const answers = await Promise.all(numbers(10).map((n) => send(h().app, a, [n])));
      expect(answers.filter((r) => r.body.status === 1)).toHaveLength(5);
      expect(answers.filter((r) => r.body.status === -7)).toHaveLength(5);
      expect(await countsOf(h(), a)).toEqual([{ day: '2026-01-05', messages: 5 }]);
    });

    it('two Pigeon instances on one database share the count exactly', async () => {
      h().clock.set(mondayMorning);
      const other = await secondInstance(h());
      others.push(other);
      const a = await h().account();
      const answers = await Promise.all(
        numbers(12).map((n, i) => send(i % 2 === 0 ? h().app : other.app, a, [n])),
      );
      expect(answers.filter((r) => r.body.status === 1)).toHaveLength(5);
      const messages = await h()
        .deps.store.db.selectFrom('messages')
        .select('id')
        .where('account_id', '=', a.id)
        .execute();
      expect(messages).toHaveLength(5);
    });

    it('a simulation counts nothing, and answers -7 when the real send would be refused', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      expect((await send(h().app, a, numbers(5), '/send/simulate')).body.status).toBe(1);
      expect((await send(h().app, a, numbers(5), '/send/simulate')).body.status).toBe(1);
      expect(await countsOf(h(), a)).toEqual([]);
      expect((await send(h().app, a, numbers(4))).body.status).toBe(1);
      const simulated = await send(h().app, a, numbers(2, 10), '/send/simulate');
      expect(simulated.body.details).toContain('4 were accepted today');
      expect(await countsOf(h(), a)).toEqual([{ day: '2026-01-05', messages: 4 }]);
    });

    it('a send refused for credits (-3) counts nothing', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account({ credits: 2 });
      expect((await send(h().app, a, numbers(3))).body.status).toBe(-3);
      await h().deps.services.credits.addCredits(a.id, 10, 'top-up');
      expect((await send(h().app, a, numbers(5))).body.status).toBe(1);
    });

    it('a cancelled campaign gives its messages back to the day it was accepted on', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      const sent = await send(h().app, a, numbers(4));
      const cancelled = await call(h().app, 'DELETE', `/send/${sent.body.ticket}`, { token: a.token });
      expect(cancelled.body.status).toBe(1);
      expect(await countsOf(h(), a)).toEqual([{ day: '2026-01-05', messages: 0 }]);
      expect((await send(h().app, a, numbers(5, 10))).body.status).toBe(1);
    });

    it('each account has its own count, sub-accounts too', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      const sub = await h().account({ parentId: a.id, unlimited: true });
      expect((await send(h().app, a, numbers(5))).body.status).toBe(1);
      expect((await send(h().app, sub, numbers(5))).body.status).toBe(1);
      expect((await send(h().app, sub, numbers(1, 10))).body.status).toBe(-7);
    });

    it('pruning deletes the counts of the days before yesterday, in bounded batches', async () => {
      const db = h().deps.store.db;
      await db.deleteFrom('daily_message_counts').execute();
      const a = await h().account();
      for (const day of [1, 2, 3, 4, 5]) {
        h().clock.set(Date.UTC(2026, 1, day, 9, 0, 0));
        await send(h().app, a, numbers(1));
      }
      // 2026-02-05: the 1st, 2nd and 3rd go; the 4th (yesterday) and the 5th stay.
      const campaigns = h().deps.services.campaigns;
      expect(await campaigns.pruneDailyCounts(h().clock.now(), 2)).toBe(2);
      expect(await campaigns.pruneDailyCounts(h().clock.now(), 2)).toBe(1);
      expect(await campaigns.pruneDailyCounts(h().clock.now(), 2)).toBe(0);
      expect((await countsOf(h(), a)).map((r) => r.day)).toEqual(['2026-02-04', '2026-02-05']);
    });
  },
  { DAILY_MESSAGE_LIMIT: '5' },
);

describeEachDialect('daily message cap off (the default)', (h) => {
  it('with DAILY_MESSAGE_LIMIT unset nothing is counted and any number of messages is accepted', async () => {
    const a = await h().account();
    expect((await send(h().app, a, numbers(50))).body).toMatchObject({ status: 1, sent: 50 });
    expect(await countsOf(h(), a)).toEqual([]);
  });
});
