// Small sends arriving together are written together on PostgreSQL (each table's rows of the group in one
// statement, the account's balance debited once for the group): every send keeps the effects and the answer it
// would have had alone, on both dialects.
import { expect, it } from 'vitest';
import { failedTogetherMessage } from '../../src/campaigns/send-batcher.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';

const number = (n: number) => `336${String(20000000 + n).padStart(8, '0')}`;

describeEachDialect('sends written together', (h) => {
  const send = (account: TestAccount, n: number, links = false) =>
    call(h().app, 'POST', '/send', {
      token: account.token,
      json: {
        sms: {
          message: links
            ? { text: `order ${n} <-short->`, links: [`https://shop.example/${n}`] }
            : { text: `hello ${n}` },
          recipients: { gsm: [{ value: number(n), gsmsmsid: `g${n}` }] },
        },
      },
    });

  it('forty concurrent sends of one account each answer their own ticket and the balance right after them, and the ledger matches', async () => {
    const a = await h().account({ credits: 1000 });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => send(a, i, i % 2 === 0)));
    for (const r of results) expect(r.body, r.body.details).toMatchObject({ status: 1, sent: 1, cost: 1 });
    expect(new Set(results.map((r) => r.body.ticket)).size).toBe(40);
    // As if made one by one: every balance from 999 down to 960 once.
    expect(results.map((r) => r.body.credits).sort((x, y) => y - x)).toEqual(
      Array.from({ length: 40 }, (_, i) => 999 - i),
    );
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(960);
    // Written together indeed: a group whose statement fails is written again one by one, and says so.
    expect(h().logged.map((line) => line.msg)).not.toContain(failedTogetherMessage);

    const db = h().deps.store.db;
    const ledger = await db
      .selectFrom('credit_ledger')
      .select(['delta', 'balance_after', 'campaign_id'])
      .where('account_id', '=', a.id)
      .where('reason', '=', 'campaign')
      .orderBy('id')
      .execute();
    expect(ledger).toHaveLength(40);
    // In the order of its ids, the ledger walks the balance down one debit at a time.
    expect(ledger.map((line) => Number(line.balance_after))).toEqual(
      Array.from({ length: 40 }, (_, i) => 999 - i),
    );
    // Each campaign's ledger line carries the balance its send answered.
    const answered = new Map(results.map((r) => [Number(r.body.ticket), r.body.credits as number]));
    for (const line of ledger) {
      expect(Number(line.delta)).toBe(-1);
      expect(Number(line.balance_after)).toBe(answered.get(Number(line.campaign_id)));
    }
    // Each campaign holds its own message, with its own text, gsmsmsid and (every other one) its link.
    for (const [i, r] of results.entries()) {
      const id = Number(r.body.ticket);
      const messages = await db
        .selectFrom('messages')
        .select(['recipient', 'gsmsmsid', 'text', 'seq', 'state'])
        .where('campaign_id', '=', id)
        .execute();
      expect(messages).toEqual([
        expect.objectContaining({ recipient: number(i), gsmsmsid: `g${i}`, seq: 0, state: 'queued' }),
      ]);
      const links = await db.selectFrom('links').select(['long_url']).where('campaign_id', '=', id).execute();
      expect(links).toEqual(i % 2 === 0 ? [{ long_url: `https://shop.example/${i}` }] : []);
      const campaign = (await call(h().app, 'GET', `/campaign/${id}`, { token: a.token })).body.campaign[0];
      expect(campaign).toMatchObject({ text: i % 2 === 0 ? `order ${i} <-short->` : `hello ${i}`, cost: 1 });
    }
  });

  it('an unlimited sub-account and its parent sending together both spend the parent: one balance, exact', async () => {
    const parent = await h().account({ credits: 100 });
    const child = await h().account({ credits: 0, parentId: parent.id, unlimited: true });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(i % 2 === 0 ? parent : child, 100 + i)),
    );
    for (const r of results) expect(r.body, r.body.details).toMatchObject({ status: 1, sent: 1 });
    expect(results.map((r) => r.body.credits).sort((x, y) => y - x)).toEqual(
      Array.from({ length: 20 }, (_, i) => 99 - i),
    );
    expect((await call(h().app, 'GET', '/credits', { token: parent.token })).body.credits).toBe(80);
    const billed = await h()
      .deps.store.db.selectFrom('campaigns')
      .select(['account_id', 'billed_account_id'])
      .where('account_id', '=', child.id)
      .execute();
    expect(billed).toHaveLength(10);
    for (const c of billed) expect(Number(c.billed_account_id)).toBe(parent.id);
  });

  it('of thirty concurrent sends on ten credits, exactly ten are accepted and the balance ends at zero', async () => {
    const a = await h().account({ credits: 10 });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => send(a, 200 + i)));
    const statuses = results.map((r) => r.body.status);
    expect(statuses.filter((s) => s === 1)).toHaveLength(10);
    expect(statuses.filter((s) => s === -3)).toHaveLength(20);
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(0);
    const campaigns = await h()
      .deps.store.db.selectFrom('campaigns')
      .select('id')
      .where('account_id', '=', a.id)
      .execute();
    expect(campaigns).toHaveLength(10);
  });

  it('a group crossing the balance alert raises it once, with the balance of the send that reached the trigger', async () => {
    const a = await h().account({ credits: 100 });
    const r = await call(h().app, 'PUT', '/notification/balance', {
      token: a.token,
      json: { notification: { alert_trigger: '95' } },
    });
    expect(r.body.status, r.body.details).toBe(1);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => send(a, 300 + i)));
    for (const s of results) expect(s.body.status).toBe(1);
    const alerts = await h()
      .deps.store.db.selectFrom('events')
      .select('payload')
      .where('account_id', '=', a.id)
      .where('type', '=', 'BALANCE_ALERT')
      .execute();
    expect(alerts).toHaveLength(1);
    expect(JSON.parse(alerts[0].payload)).toMatchObject({ balance: 95, trigger: 95 });
  });
});
