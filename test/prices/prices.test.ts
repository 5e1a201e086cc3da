// Prices per destination: every place that shows or charges a cost prices each recipient by the longest prefix
// its list names, else its country, else the list's default; an account's list is inherited by its
// sub-accounts unless they have their own; the instance's list is the default under all of them. Each message
// stores what it was charged, which refunds and consumption read back.
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { deliveringSimulator, testDeliveryWorker, untilFinal } from '../helpers/worker.ts';

let seq = 0;
/** A French mobile in 336 (priced by the country FR), one in 337 (by the prefix 3367… or 337), Belgian, British. */
const fr6 = () => `33656${String(200_000 + ++seq).padStart(6, '0')}`;
const fr7 = () => `33767${String(200_000 + ++seq).padStart(6, '0')}`;
const be = () => `32470${String(200_000 + ++seq).padStart(6, '0')}`;
const gb = () => `447400${String(200_000 + ++seq).padStart(6, '0')}`;

const twoParts = 'a'.repeat(200);

const sms = (text: string, numbers: string[], delay?: string) => ({
  sms: {
    message: { text, pushtype: 'alert', ...(delay && { delay }) },
    recipients: { gsm: numbers.map((value) => ({ value })) },
  },
});

async function send(h: Harness, a: TestAccount, numbers: string[], text = 'Bonjour', delay?: string) {
  const r = await call(h.app, 'POST', '/send', { token: a.token, json: sms(text, numbers, delay) });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body as { ticket: string; cost: number; credits: number };
}

const setPrices = (h: Harness, a: TestAccount | undefined, csv: string) =>
  h.deps.services.prices.set(a?.id, csv);

const balance = (h: Harness, a: TestAccount) => h.deps.services.credits.credits(a.id);

describeEachDialect('prices per destination', (h) => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    await h().deps.services.prices.clear(undefined);
  });

  it('without any price list a part costs one credit, as before', async () => {
    const a = await h().account({ credits: 100 });
    const r = await send(h(), a, [fr6(), be(), gb()], twoParts);
    expect(r).toMatchObject({ cost: 6, credits: 94 });
  });

  it('the send result, the debit and each stored message use the price: the longest prefix wins over a shorter one and the country', async () => {
    const a = await h().account({ credits: 1000 });
    await setPrices(h(), a, 'country_or_prefix,credits\nFR,2\n33,9\n3376,4\n337672,5\nBE,7\n');
    const numbers = [fr6(), fr7(), be(), gb()];
    const r = await send(h(), a, numbers, twoParts);
    // FR 336…: the prefix 33 (9) beats the country; 337672…: 5 beats 3376 and 33; BE 7; GB: the default, 1.
    expect(r).toMatchObject({ cost: 2 * (9 + 5 + 7 + 1), credits: 1000 - 44 });
    expect(await balance(h(), a)).toBe(956);
    const messages = await h()
      .deps.store.db.selectFrom('messages')
      .select(['recipient', 'parts', 'credits'])
      .where('campaign_id', '=', Number(r.ticket))
      .orderBy('seq')
      .execute();
    expect(messages.map((m) => [m.recipient, Number(m.parts), Number(m.credits)])).toEqual([
      [numbers[0], 2, 18],
      [numbers[1], 2, 10],
      [numbers[2], 2, 14],
      [numbers[3], 2, 2],
    ]);
    const ledger = await h()
      .deps.store.db.selectFrom('credit_ledger')
      .select('delta')
      .where('campaign_id', '=', Number(r.ticket))
      .execute();
    expect(ledger.map((l) => Number(l.delta))).toEqual([-44]);
  });

  it('a simulation answers the same priced cost, charges nothing, and -3 when the priced send could not be paid', async () => {
    const a = await h().account({ credits: 10 });
    await setPrices(h(), a, 'FR,3\n*,2\n');
    const numbers = [fr6(), fr7(), be()];
    const simulated = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: sms('Hi', numbers),
    });
    expect(simulated.body).toMatchObject({ status: 1, cost: 8, credits: 2 });
    expect(simulated.body.ticket).toBeUndefined();
    expect(await balance(h(), a)).toBe(10);
    const tooDear = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: sms('Hi', [...numbers, fr6()]),
    });
    expect(tooDear.body).toMatchObject({
      status: -3,
      details: 'this send costs 11 credits and 10 are available',
    });
    const refused = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: sms('Hi', [...numbers, fr6()]),
    });
    expect(refused.body.status).toBe(-3);
    expect(await balance(h(), a)).toBe(10);
  });

  it('the campaign views show the priced cost, and a cancel refunds it', async () => {
    const a = await h().account({ credits: 100 });
    await setPrices(h(), a, 'FR,3\nBE,5\n');
    const r = await send(h(), a, [fr6(), be()], twoParts, '2030-06-01 10:00:00');
    expect(r).toMatchObject({ cost: 16, credits: 84 });
    const one = await call(h().app, 'GET', `/campaign/${r.ticket}`, { token: a.token });
    expect(one.body.campaign[0].cost).toBe(16);
    const list = await call(h().app, 'GET', '/campaigns', { token: a.token });
    expect(list.body.campaigns.find((c: { id: string }) => String(c.id) === r.ticket).cost).toBe(16);
    // The list changes after the send: the refund is what the send charged, never a new price.
    await setPrices(h(), a, 'FR,50\nBE,50\n');
    const cancel = await call(h().app, 'DELETE', `/send/${r.ticket}`, { token: a.token });
    expect(cancel.body).toEqual({ status: 1, message: 'OK', credits: 100 });
    const refund = await h()
      .deps.store.db.selectFrom('credit_ledger')
      .select(['delta', 'reason'])
      .where('campaign_id', '=', Number(r.ticket))
      .orderBy('id')
      .execute();
    expect(refund.map((l) => [Number(l.delta), l.reason])).toEqual([
      [-16, 'campaign'],
      [16, 'refund'],
    ]);
  });

  it('consumption per country and the message history read the credits each message was charged, never priced again', async () => {
    h().clock.set(Date.UTC(2026, 2, 10, 9, 0, 0));
    const a = await h().account({ credits: 1000 });
    await setPrices(h(), a, 'FR,3\n3376,4\nBE,5\n');
    const r = await send(h(), a, [fr6(), fr7(), be(), gb()], twoParts);
    expect(r.cost).toBe(2 * (3 + 4 + 5 + 1));
    const worker = testDeliveryWorker(h(), deliveringSimulator());
    workers.push(worker);
    await worker.start();
    await untilFinal(h(), [r.ticket]);
    // Repriced after the send: what was charged stands.
    await setPrices(h(), a, 'FR,100\n');
    const conso = await call(h().app, 'GET', '/metrics/consumption', {
      token: a.token,
      query: { date_start: '2026-03-10', date_end: '2026-03-10' },
    });
    expect(conso.body.data.my_account.conso).toEqual({ total: 26, by_country: { FR: 14, BE: 10, GB: 2 } });
    const history = await call(h().app, 'GET', '/messages', {
      token: a.token,
      query: { date_start: '2026-03-10 00:00:00', date_end: '2026-03-10 23:59:59' },
    });
    const costs = Object.fromEntries(
      history.body.messages.map((m: { destination: string; cost: number }) => [
        m.destination.slice(0, 4),
        m.cost,
      ]),
    );
    expect(costs).toEqual({ '3365': 6, '3376': 8, '3247': 10, '4474': 2 });
  });

  it("sub-accounts inherit their parent's list until given their own, which replaces only what it names; the instance's list is under all", async () => {
    const parent = await h().account({ credits: 1000 });
    const child = await h().account({ credits: 1000, parentId: parent.id });
    const grandchild = await h().account({ credits: 1000, parentId: child.id });
    const other = await h().account({ credits: 1000 });
    await setPrices(h(), undefined, 'GB,6\nBE,2\n');
    await setPrices(h(), parent, 'FR,3\nBE,4\n');
    const numbers = () => [fr6(), be(), gb()];
    expect((await send(h(), parent, numbers())).cost).toBe(3 + 4 + 6);
    expect((await send(h(), child, numbers())).cost).toBe(3 + 4 + 6);
    expect((await send(h(), grandchild, numbers())).cost).toBe(3 + 4 + 6);
    expect((await send(h(), other, numbers())).cost).toBe(1 + 2 + 6);
    await setPrices(h(), child, 'FR,8\n');
    expect((await send(h(), parent, numbers())).cost).toBe(3 + 4 + 6);
    expect((await send(h(), child, numbers())).cost).toBe(8 + 4 + 6);
    expect((await send(h(), grandchild, numbers())).cost).toBe(8 + 4 + 6);
    await h().deps.services.prices.clear(child.id);
    expect((await send(h(), grandchild, numbers())).cost).toBe(3 + 4 + 6);
  });

  it('GET /account/prices answers what one part costs the caller per country, its finer prefixes and its default', async () => {
    const parent = await h().account();
    const child = await h().account({ parentId: parent.id });
    await setPrices(h(), parent, 'FR,3\n3367,4\n*,2\n');
    const r = await call(h().app, 'GET', '/account/prices', { token: child.token });
    expect(r.body).toMatchObject({ status: 1, default: 2, prefixes: [{ prefix: '3367', credits: 4 }] });
    expect(r.body.by_country.FR).toBe(3);
    expect(r.body.by_country.BE).toBe(2);
    expect(Object.keys(r.body.by_country).length).toBeGreaterThan(200);
    const xml = await call(h().app, 'GET', '/account/prices', {
      token: child.token,
      accept: 'application/xml',
    });
    expect(xml.body.by_country.FR).toBe('3');
    const plain = await call(h().app, 'GET', '/account/prices', { token: (await h().account()).token });
    expect(plain.body).toMatchObject({ status: 1, default: 1, prefixes: [] });
    expect(plain.body.by_country.FR).toBe(1);
  });

  it('a broken price list is refused naming each bad line, and the list in place stays', async () => {
    const a = await h().account();
    await setPrices(h(), a, 'FR,2\n');
    await expect(setPrices(h(), a, 'FR,2\nXX,3\n33a,1\nBE,-1\nBE,1.5\nFR,4\nDE\n')).rejects.toMatchObject({
      status: -7,
      details:
        'the price list has errors: line 2: "XX" is neither an ISO 3166-1 alpha-2 country, an E.164 prefix of 1 to 15 digits nor *; line 3: "33a" is neither an ISO 3166-1 alpha-2 country, an E.164 prefix of 1 to 15 digits nor *; line 4: credits "-1" must be a whole number of credits per SMS part from 0 to 100000; line 5: credits "1.5" must be a whole number of credits per SMS part from 0 to 100000; line 6: FR is already priced on line 1; line 7 "DE": expected country_or_prefix,credits',
    });
    expect((await h().deps.services.prices.show(a.id)).own).toEqual([{ destination: 'FR', credits: 2 }]);
  });
});
