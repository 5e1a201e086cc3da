// SMS parts per second per account: never a refusal, a pace. A paced account's messages are queued at due times
// spread so its parts leave at most N per second, across processes; other accounts' messages do not wait
// behind it. Measured on the test's clock: the delivery worker sends what is due, when it is due.
import { afterAll, expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { type SecondInstance, secondInstance } from '../helpers/second-instance.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveringWorkers } from '../helpers/worker.ts';

const fr = (n: number) => `336${String(12345600 + n).padStart(8, '0')}`;
const numbers = (count: number, from = 0) => Array.from({ length: count }, (_, i) => fr(from + i));
/** 2026-01-05 10:00 in Paris. */
const t0 = Date.UTC(2026, 0, 5, 9, 0, 0);

const send = (app: Harness['app'], a: TestAccount, to: string[], message: Record<string, unknown> = {}) =>
  call(app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: { message: { text: 'Hello', ...message }, recipients: { gsm: to.map((value) => ({ value })) } },
    },
  });

describeEachDialect('parts per second', (h) => {
  const startWorker = deliveringWorkers(h);
  const others: SecondInstance[] = [];
  afterAll(async () => {
    for (const other of others) await other.close();
  });

  const setLimits = (a: TestAccount, limits: Record<string, unknown>) =>
    h().deps.services.limits.set('cli', a.id, limits);

  /** At t0, a new account paced at 10 parts/s whose texts with `word` are held for moderation. */
  async function pacedWithHoldRule(word: string): Promise<TestAccount> {
    h().clock.set(t0);
    const a = await h().account();
    await setLimits(a, { parts_per_second: 10 });
    await h().deps.services.moderation.addRule('cli', {
      account_id: String(a.id),
      kind: 'word',
      value: word,
      action: 'hold',
    });
    return a;
  }

  /** The account's messages, in their campaigns' order: when due, when sent, how many parts. */
  const messagesOf = async (a: TestAccount) =>
    (
      await h()
        .deps.store.db.selectFrom('messages')
        .select(['campaign_id', 'seq', 'due_at', 'sent_at', 'parts'])
        .where('account_id', '=', a.id)
        .orderBy('due_at')
        .orderBy('campaign_id')
        .orderBy('seq')
        .execute()
    ).map((m) => ({
      campaign: Number(m.campaign_id),
      dueAt: Number(m.due_at) - t0,
      sentAt: m.sent_at === null ? null : Number(m.sent_at) - t0,
      parts: Number(m.parts),
    }));

  it("an account at 20 parts/s sending 60 parts is delivered over 3 s by the clock; another account's send in the middle goes out at once", async () => {
    h().clock.set(t0);
    const paced = await h().account();
    const other = await h().account();
    await setLimits(paced, { parts_per_second: 20 });
    const sent = await send(h().app, paced, numbers(60));
    // Accepted whole, never refused for its pace.
    expect(sent.body).toMatchObject({ status: 1, sent: 60 });
    expect((await messagesOf(paced)).map((m) => m.dueAt)).toEqual(
      Array.from({ length: 60 }, (_, i) => i * 50),
    );

    await startWorker();
    let otherSent: number | undefined;
    for (let ms = 0; ms <= 3000; ms += 250) {
      h().clock.set(t0 + ms);
      if (ms === 1500) {
        expect((await send(h().app, other, numbers(5, 100))).body.status).toBe(1);
        otherSent = ms;
      }
      const due = Math.min(60, Math.floor(ms / 50) + 1);
      await waitFor(
        async () => (await messagesOf(paced)).filter((m) => m.sentAt !== null).length === due,
        `${due} paced messages sent at ${ms} ms`,
      );
      if (otherSent !== undefined) {
        await waitFor(
          async () => (await messagesOf(other)).every((m) => m.sentAt !== null),
          "the other account's messages sent",
        );
      }
    }
    const delivered = await messagesOf(paced);
    // Never before its slot, and at most 20 parts in any second of the clock.
    for (const m of delivered) expect(m.sentAt!).toBeGreaterThanOrEqual(m.dueAt);
    for (let from = 0; from < 3000; from += 50) {
      const inWindow = delivered.filter((m) => m.sentAt! >= from && m.sentAt! < from + 1000);
      expect(inWindow.reduce((sum, m) => sum + m.parts, 0)).toBeLessThanOrEqual(20);
    }
    // The first at 0, the last (due at 2.95 s) at the clock's first step after it: over 3 s.
    expect(Math.min(...delivered.map((m) => m.sentAt!))).toBe(0);
    expect(Math.max(...delivered.map((m) => m.sentAt!))).toBe(3000);
    // The other account's send in the middle was due and sent at once, at 1.5 s.
    expect((await messagesOf(other)).map((m) => [m.dueAt, m.sentAt])).toEqual(
      Array.from({ length: 5 }, () => [1500, 1500]),
    );
  });

  it("a message's parts take their slots: 2-part messages at 10 parts/s leave every 200 ms", async () => {
    h().clock.set(t0);
    const a = await h().account();
    await setLimits(a, { parts_per_second: 10 });
    const twoParts = 'x'.repeat(200);
    expect((await send(h().app, a, numbers(4), { text: twoParts })).body).toMatchObject({
      status: 1,
      cost: 8,
    });
    expect((await messagesOf(a)).map((m) => [m.dueAt, m.parts])).toEqual([
      [0, 2],
      [200, 2],
      [400, 2],
      [600, 2],
    ]);
  });

  it('sends of one account, from two Pigeon instances at once, queue one after the other: the pace holds across processes', async () => {
    h().clock.set(t0);
    const second = await secondInstance(h());
    others.push(second);
    const a = await h().account();
    await setLimits(a, { parts_per_second: 20 });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => send(i % 2 === 0 ? h().app : second.app, a, numbers(6, i * 10))),
    );
    expect(answers.every((r) => r.body.status === 1)).toBe(true);
    // 60 parts: each on its own 50 ms slot from 0 to 2.95 s, whichever send and process booked it.
    const dues = (await messagesOf(a)).map((m) => m.dueAt);
    expect(dues).toEqual(Array.from({ length: 60 }, (_, i) => i * 50));
    // Each send's messages are consecutive.
    const campaigns = (await messagesOf(a)).map((m) => m.campaign);
    for (let i = 0; i < 60; i += 6) expect(new Set(campaigns.slice(i, i + 6)).size).toBe(1);
  });

  it('the pace starts from now once the earlier slots are past, and a scheduled campaign is paced from its due time without delaying the sends of today', async () => {
    h().clock.set(t0);
    const a = await h().account();
    await setLimits(a, { parts_per_second: 10 });
    expect((await send(h().app, a, numbers(5))).body.status).toBe(1);
    // 0.2 s later, the first send's slots run to 0.5 s: this one follows them.
    h().clock.set(t0 + 200);
    expect((await send(h().app, a, numbers(2, 10))).body.status).toBe(1);
    // Tomorrow 10:00 Paris: paced from its due time, books nothing of today.
    const tomorrow = 86_400_000;
    expect((await send(h().app, a, numbers(3, 20), { delay: '2026-01-06 10:00:00' })).body.status).toBe(1);
    // 10 s later: the earlier slots are past, the pace starts at now.
    h().clock.set(t0 + 10_000);
    expect((await send(h().app, a, numbers(2, 30))).body.status).toBe(1);
    expect((await messagesOf(a)).map((m) => m.dueAt)).toEqual([
      0,
      100,
      200,
      300,
      400,
      500,
      600,
      10_000,
      10_100,
      tomorrow,
      tomorrow + 100,
      tomorrow + 200,
    ]);
  });

  it('a campaign held for moderation books none of the pace: the sends after it are due at once', async () => {
    const a = await pacedWithHoldRule('holdpaced');
    const held = await send(h().app, a, numbers(5), { text: 'Hello holdpaced' });
    expect(held.body).toMatchObject({ status: 1, moderation: 'pending' });
    expect((await send(h().app, a, numbers(2, 10))).body.status).toBe(1);
    const messages = await messagesOf(a);
    const heldCampaign = Number(held.body.ticket);
    // The held campaign's messages are spread from its due time; the next send starts at now, not after them.
    expect(messages.filter((m) => m.campaign === heldCampaign).map((m) => m.dueAt)).toEqual([
      0, 100, 200, 300, 400,
    ]);
    expect(messages.filter((m) => m.campaign !== heldCampaign).map((m) => m.dueAt)).toEqual([0, 100]);
  });

  it("a paced account's messages queued at once, by an approval or an unlock, leave at its pace from then", async () => {
    const a = await pacedWithHoldRule('waitpaced');
    const held = await send(h().app, a, numbers(5, 20), { text: 'Hello waitpaced' });
    expect(held.body).toMatchObject({ status: 1, moderation: 'pending' });
    // Ten seconds later the operator approves it: its slots (0 to 400 ms) are long past, so it would all leave
    // at once; it is spread from the approval instead, and booked (the next send comes after it).
    h().clock.set(t0 + 10_000);
    expect(await h().deps.services.campaigns.approveHeld(Number(held.body.ticket))).toMatchObject({
      messages: 5,
    });
    expect((await send(h().app, a, numbers(1, 30))).body.status).toBe(1);
    expect((await messagesOf(a)).map((m) => m.dueAt)).toEqual([
      10_000, 10_100, 10_200, 10_300, 10_400, 10_500,
    ]);

    // Queued, then held by the operator's lock, released by the unlock twenty seconds later: from then too.
    const b = await h().account();
    await setLimits(b, { parts_per_second: 10 });
    h().clock.set(t0 + 20_000);
    expect((await send(h().app, b, numbers(3, 40))).body.status).toBe(1);
    expect(await h().deps.services.accounts.operatorLock(b.id)).toMatchObject({ held_messages: 3 });
    h().clock.set(t0 + 40_000);
    expect(await h().deps.services.accounts.operatorUnlock(b.id)).toMatchObject({ released_messages: 3 });
    expect((await messagesOf(b)).map((m) => m.dueAt)).toEqual([40_000, 40_100, 40_200]);
  });

  it('without a pace (the default) every message of a send is due at once, and no pacing row is written', async () => {
    h().clock.set(t0);
    const a = await h().account();
    expect((await send(h().app, a, numbers(10))).body.status).toBe(1);
    expect(new Set((await messagesOf(a)).map((m) => m.dueAt))).toEqual(new Set([0]));
    const rows = await h()
      .deps.store.db.selectFrom('account_pacing')
      .select('account_id')
      .where('account_id', '=', a.id)
      .execute();
    expect(rows).toEqual([]);
  });
});
