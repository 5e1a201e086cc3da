// Per-account message quotas: an account's own daily and monthly limits (else its parent's, else the instance's
// DAILY_MESSAGE_LIMIT and MONTHLY_MESSAGE_LIMIT), exact under concurrent sends, refused with -7 naming the
// limit, given back by a cancel.
import { afterAll, expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { type SecondInstance, secondInstance } from '../helpers/second-instance.ts';

const fr = (n: number) => `336${String(12345600 + n).padStart(8, '0')}`;
const numbers = (count: number, from = 0) => Array.from({ length: count }, (_, i) => fr(from + i));

/** 2026-01-05 10:00 in Paris (09:00 UTC). */
const mondayMorning = Date.UTC(2026, 0, 5, 9, 0, 0);
/** 2026-02-01 00:00 in Paris: 23:00 UTC on 31 January. */
const februaryParis = Date.UTC(2026, 0, 31, 23, 0, 0);

const send = (
  h: Harness,
  a: TestAccount,
  to: string[],
  extra: Record<string, unknown> = {},
  path = '/send',
) =>
  call(h.app, 'POST', path, {
    token: a.token,
    json: {
      sms: { message: { text: 'Hello', ...extra }, recipients: { gsm: to.map((value) => ({ value })) } },
    },
  });

const accepted = (answers: { body: { status: number } }[]) =>
  answers.filter((r) => r.body.status === 1).length;

async function monthCount(h: Harness, a: TestAccount) {
  return h.deps.store.db
    .selectFrom('monthly_message_counts')
    .select(['month', 'messages'])
    .where('account_id', '=', a.id)
    .orderBy('month')
    .execute()
    .then((rows) => rows.map((r) => ({ month: r.month, messages: Number(r.messages) })));
}

const setLimits = (h: Harness, a: TestAccount | number, limits: Record<string, unknown>) =>
  h.deps.services.limits.set('cli', typeof a === 'number' ? a : a.id, limits);

describeEachDialect(
  'per-account quotas',
  (h) => {
    const others: SecondInstance[] = [];
    afterAll(async () => {
      for (const other of others) await other.close();
    });

    it("an account's own daily limit is exact under 64 concurrent one-message sends, and its refusal names it", async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      await setLimits(h(), a, { daily_messages: 20 });
      const answers = await Promise.all(numbers(64).map((n) => send(h(), a, [n])));
      expect(accepted(answers)).toBe(20);
      const refused = answers.find((r) => r.body.status === -7)!;
      expect(refused.body).toEqual({
        status: -7,
        message: 'Data error',
        details: `the daily message limit of account ${a.id} (pigeon account limits): account ${a.id} may have 20 messages accepted per day; 20 were accepted today (2026-01-05, Europe/Paris) and this send has 1, 1 too many`,
      });
      const messages = await h()
        .deps.store.db.selectFrom('messages')
        .select('id')
        .where('account_id', '=', a.id)
        .execute();
      expect(messages).toHaveLength(20);
      expect(await h().deps.services.credits.credits(a.id)).toBe(980);
    });

    it('the instance default MONTHLY_MESSAGE_LIMIT holds every account without its own, exactly under 64 concurrent sends', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      const answers = await Promise.all(numbers(64).map((n) => send(h(), a, [n])));
      expect(accepted(answers)).toBe(30);
      expect(answers.find((r) => r.body.status === -7)!.body.details).toBe(
        `MONTHLY_MESSAGE_LIMIT: account ${a.id} may have 30 messages accepted per month; 30 were accepted this month (2026-01, Europe/Paris) and this send has 1, 1 too many`,
      );
      expect(await monthCount(h(), a)).toEqual([{ month: '2026-01', messages: 30 }]);
    });

    it('two Pigeon instances on one database share the monthly count exactly', async () => {
      h().clock.set(mondayMorning);
      const other = await secondInstance(h());
      others.push(other);
      const a = await h().account();
      await setLimits(h(), a, { monthly_messages: 7 });
      const answers = await Promise.all(
        numbers(24).map((n, i) =>
          call(i % 2 === 0 ? h().app : other.app, 'POST', '/send', {
            token: a.token,
            json: { sms: { message: { text: 'Hello' }, recipients: { gsm: [{ value: n }] } } },
          }),
        ),
      );
      expect(accepted(answers)).toBe(7);
      expect(await monthCount(h(), a)).toEqual([{ month: '2026-01', messages: 7 }]);
    });

    it('the monthly count runs across days and starts again with the month in TIMEZONE, not in UTC', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      await setLimits(h(), a, { monthly_messages: 10 });
      expect((await send(h(), a, numbers(6))).body.status).toBe(1);
      h().clock.set(mondayMorning + 3 * 86_400_000);
      expect((await send(h(), a, numbers(5, 10))).body.details).toContain(
        '6 were accepted this month (2026-01, Europe/Paris) and this send has 5, 1 too many',
      );
      expect((await send(h(), a, numbers(4, 10))).body.status).toBe(1);
      // 23:59:59 on 31 January in Paris, 22:59:59 UTC: still January.
      h().clock.set(februaryParis - 1000);
      expect((await send(h(), a, numbers(1, 20))).body.status).toBe(-7);
      h().clock.set(februaryParis);
      expect((await send(h(), a, numbers(10, 30))).body).toMatchObject({ status: 1, sent: 10 });
      expect(await monthCount(h(), a)).toEqual([
        { month: '2026-01', messages: 10 },
        { month: '2026-02', messages: 10 },
      ]);
    });

    it("a sub-account inherits its parent's limits unless it has its own; 0 is no limit, over the instance's", async () => {
      h().clock.set(mondayMorning);
      const parent = await h().account();
      const sub = await h().account({ parentId: parent.id });
      const own = await h().account({ parentId: parent.id });
      await setLimits(h(), parent, { daily_messages: 3 });
      await setLimits(h(), own, { daily_messages: 5, monthly_messages: 0 });
      // The parent's daily limit, counted for the sub-account alone.
      expect((await send(h(), sub, numbers(3))).body.status).toBe(1);
      expect((await send(h(), sub, numbers(1, 10))).body.details).toContain(
        `the daily message limit of account ${parent.id}, parent of account ${sub.id} (pigeon account limits): account ${sub.id} may have 3`,
      );
      expect((await send(h(), parent, numbers(3))).body.status).toBe(1);
      // Its own: 5 a day, and no monthly limit at all (the instance's is 30).
      expect((await send(h(), own, numbers(5))).body.status).toBe(1);
      expect((await send(h(), own, numbers(1, 10))).body.status).toBe(-7);
      await setLimits(h(), own, { daily_messages: 0 });
      h().clock.advance(1000);
      expect((await send(h(), own, numbers(40, 10))).body).toMatchObject({ status: 1, sent: 40 });
      expect(await monthCount(h(), own)).toEqual([]);
    });

    it("a sub-account's send whose caller does not name its parent (an SMPP user's) is held to its parent's limits too", async () => {
      h().clock.set(mondayMorning);
      const parent = await h().account();
      const sub = await h().account({ parentId: parent.id });
      await setLimits(h(), parent, { daily_messages: 2 });
      const { sending } = h().deps.services;
      const asSmppUser = { accountId: sub.id, tokenId: 0, parentId: null };
      const message = { text: 'Hello' };
      const recipients = numbers(3).map((value) => ({ value }));
      await expect(sending.send(asSmppUser, message, recipients, { simulate: false })).rejects.toMatchObject({
        status: -7,
        details: expect.stringContaining(
          `the daily message limit of account ${parent.id}, parent of account ${sub.id}`,
        ),
      });
    });

    it('a simulation answers -7 for a monthly limit the real send would pass, and counts nothing', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      await setLimits(h(), a, { monthly_messages: 4 });
      expect((await send(h(), a, numbers(4), {}, '/send/simulate')).body.status).toBe(1);
      expect((await send(h(), a, numbers(3))).body.status).toBe(1);
      const simulated = await send(h(), a, numbers(2, 10), {}, '/send/simulate');
      expect(simulated.body).toMatchObject({ status: -7 });
      expect(simulated.body.details).toContain('3 were accepted this month');
      expect(await monthCount(h(), a)).toEqual([{ month: '2026-01', messages: 3 }]);
    });

    it('a cancelled campaign gives its messages back to its day and its month', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      await setLimits(h(), a, { daily_messages: 5, monthly_messages: 8 });
      const sent = await send(h(), a, numbers(5), { delay: '2026-01-20 10:00:00' });
      expect(sent.body.status).toBe(1);
      expect((await send(h(), a, numbers(1, 10))).body.status).toBe(-7);
      const cancelled = await call(h().app, 'DELETE', `/send/${sent.body.ticket}`, { token: a.token });
      expect(cancelled.body.status).toBe(1);
      expect(await monthCount(h(), a)).toEqual([{ month: '2026-01', messages: 0 }]);
      expect((await send(h(), a, numbers(5, 20))).body.status).toBe(1);
      h().clock.advance(86_400_000);
      // The month still holds 5 of 8.
      expect((await send(h(), a, numbers(4, 30))).body.details).toContain('5 were accepted this month');
      expect((await send(h(), a, numbers(3, 30))).body.status).toBe(1);
    });

    it('a change made by this process applies at once, counted from then on; another account is not affected', async () => {
      h().clock.set(mondayMorning);
      const a = await h().account();
      const b = await h().account();
      // Without a daily limit nothing is counted per day (no statement): a limit set at noon counts from noon.
      expect((await send(h(), a, numbers(2))).body.status).toBe(1);
      await setLimits(h(), a, { daily_messages: 2 });
      expect((await send(h(), a, numbers(2, 10))).body.status).toBe(1);
      expect((await send(h(), a, numbers(1, 10))).body.status).toBe(-7);
      expect((await send(h(), b, numbers(3))).body.status).toBe(1);
      await h().deps.services.limits.clear('cli', a.id);
      expect((await send(h(), a, numbers(1, 10))).body.status).toBe(1);
    });

    it('pruning deletes the months before last month, and the days before yesterday', async () => {
      const db = h().deps.store.db;
      await db.deleteFrom('monthly_message_counts').execute();
      await db.deleteFrom('daily_message_counts').execute();
      const a = await h().account();
      await setLimits(h(), a, { daily_messages: 100 });
      for (const monthIndex of [0, 1, 2, 3]) {
        h().clock.set(Date.UTC(2026, monthIndex, 10, 9, 0, 0));
        expect((await send(h(), a, numbers(1))).body.status).toBe(1);
      }
      h().clock.set(Date.UTC(2026, 3, 11, 9, 0, 0));
      expect((await send(h(), a, numbers(1))).body.status).toBe(1);
      // 2026-04-11: January and February go, and the days before yesterday (3); March and April stay.
      const { campaigns } = h().deps.services;
      expect(await campaigns.pruneDailyCounts(h().clock.now(), 10)).toBe(5);
      expect(await campaigns.pruneDailyCounts(h().clock.now(), 10)).toBe(0);
      expect((await monthCount(h(), a)).map((r) => r.month)).toEqual(['2026-03', '2026-04']);
      const days = await db
        .selectFrom('daily_message_counts')
        .select('day')
        .where('account_id', '=', a.id)
        .execute();
      expect(days.map((d) => d.day)).toEqual(['2026-04-10', '2026-04-11']);
    });
  },
  { MONTHLY_MESSAGE_LIMIT: '30' },
);
