// The console's live counter prices its parts with what the server says the account pays (GET /account/prices):
// exact when one price holds everywhere, a floor (flagged "at least") when prices differ by destination.
import { expect, it } from 'vitest';
import { countMessage } from '../../console/src/components/count-message.ts';
import type { Session } from '../../console/src/session.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

const session = { stop_mention: 'STOP au 36111', short_url_length: 20 } as Session;
const count = (prices: Parameters<typeof countMessage>[0]['prices'], recipients = 3) =>
  countMessage({
    text: 'a'.repeat(200),
    pushtype: 'alert',
    unicode: false,
    recipients,
    withFields: false,
    session,
    prices,
  });

describeEachDialect('console counter prices', (h) => {
  it('without a price list a part costs one credit: parts × recipients, exact', async () => {
    const a = await h().account();
    const prices = (await call(h().app, 'GET', '/account/prices', { token: a.token })).body;
    expect(count(prices)).toMatchObject({ parts: 2, cost: 6, approximate: null });
  });

  it('with one price everywhere the counter charges it exactly; with prices differing, the cheapest is a floor and says why', async () => {
    const a = await h().account();
    await h().deps.services.prices.set(a.id, '*,3\n');
    const uniform = (await call(h().app, 'GET', '/account/prices', { token: a.token })).body;
    expect(count(uniform)).toMatchObject({ parts: 2, cost: 18, approximate: null });
    await h().deps.services.prices.set(a.id, '*,3\nFR,2\n3367,5\n');
    const differing = (await call(h().app, 'GET', '/account/prices', { token: a.token })).body;
    expect(count(differing)).toMatchObject({
      parts: 2,
      cost: 12,
      approximate: 'a part costs 2 to 5 credits depending on the destination',
    });
  });
});
