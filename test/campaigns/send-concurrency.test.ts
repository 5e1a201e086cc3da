// Sends at once from several accounts, mixed as a busy server sees them: small sends written together (on
// PostgreSQL), keyed sends and a long list of recipients written alone, a sub-account paid by its parent, an
// account that runs out of credits midway. Nothing waits forever, no send
// fails for another's lock (a deadlock would answer -99), and every ledger matches its answers exactly.
import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

const number = (i: number) => `3361${String(2_000_000 + i).padStart(7, '0')}`;

describeEachDialect('concurrent sends of several accounts', (h) => {
  it('answer each send on its own and debit each paying account exactly', async () => {
    const parent = await h().account({ credits: 10_000 });
    const child = await h().account({ credits: 0, parentId: parent.id, unlimited: true });
    const other = await h().account({ credits: 10_000 });
    const short = await h().account({ credits: 30 });
    const accounts = [parent, child, other, short];
    const sends = Array.from({ length: 160 }, (_, i) => {
      const account = accounts[i % accounts.length];
      const recipients = i % 40 === 7 ? 120 : 1 + (i % 3);
      const gsm = Array.from({ length: recipients }, (_, k) => ({ value: number(i * 200 + k) }));
      return call(h().app, 'POST', '/send', {
        token: account.token,
        headers: i % 5 === 0 ? { 'idempotency-key': `lanes-${i}` } : {},
        json: { sms: { message: { text: 'Hi', pushtype: 'alert' }, recipients: { gsm } } },
      }).then((r) => ({ account, r }));
    });
    const answers = await Promise.all(sends);
    const spent = new Map<number, number>();
    for (const { account, r } of answers) {
      // Sent, or refused for want of credits (-3) on the account that runs short: never another error.
      expect([1, -3], JSON.stringify(r.body)).toContain(r.body.status);
      if (r.body.status === -3) expect(account).toBe(short);
      const payer = account === child ? parent : account;
      if (r.body.status === 1) spent.set(payer.id, (spent.get(payer.id) ?? 0) + Number(r.body.cost));
    }
    const credits = async (token: string) =>
      Number((await call(h().app, 'GET', '/credits', { token })).body.credits);
    expect(await credits(parent.token)).toBe(10_000 - (spent.get(parent.id) ?? 0));
    expect(await credits(other.token)).toBe(10_000 - (spent.get(other.id) ?? 0));
    expect(await credits(short.token)).toBe(30 - (spent.get(short.id) ?? 0));
    expect(await credits(short.token)).toBeGreaterThanOrEqual(0);
    const ledger = await h()
      .deps.store.db.selectFrom('credit_ledger')
      .select(['account_id', (eb) => eb.fn.sum<number>('delta').as('total')])
      .where('account_id', 'in', [parent.id, other.id, short.id])
      .where('reason', '=', 'campaign')
      .groupBy('account_id')
      .execute();
    for (const row of ledger) expect(-Number(row.total)).toBe(spent.get(Number(row.account_id)) ?? 0);
  });
});
