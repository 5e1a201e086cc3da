// Content rules on the send paths (refuse or hold, checked once per campaign), and the operator's moderation
// of a held campaign: approved, its messages go out and their receipts come; refused, its messages are
// cancelled and its cost refunded with a ledger line. /operator/* answers operator accounts only.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveringWorkers, testDispatcher } from '../helpers/worker.ts';

let numberSeq = 0;
const freshNumbers = (count: number) =>
  Array.from({ length: count }, () => ({ value: `3361${String(5000100 + ++numberSeq).padStart(7, '0')}` }));

async function operator(h: Harness): Promise<TestAccount> {
  const a = await h.account({ credits: 0 });
  await h.deps.services.moderation.grantOperator('cli', a.id);
  return a;
}

const send = (h: Harness, a: TestAccount, text: string, count = 1, links?: string[]) =>
  call(h.app, 'POST', '/send', {
    token: a.token,
    json: { sms: { message: { text, ...(links && { links }) }, recipients: { gsm: freshNumbers(count) } } },
  });

async function addRule(h: Harness, op: TestAccount, rule: Record<string, unknown>) {
  const r = await call(h.app, 'POST', '/operator/rule', { token: op.token, json: { rule } });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.rule as { id: string };
}

const credits = async (h: Harness, a: TestAccount) =>
  (await call(h.app, 'GET', '/credits', { token: a.token })).body.credits;

const messagesOf = (h: Harness, ticket: string) =>
  h.deps.store.db
    .selectFrom('messages')
    .select(['state', 'dlr_status', 'sent_at'])
    .where('campaign_id', '=', Number(ticket))
    .orderBy('seq')
    .execute();

const eventsOf = async (h: Harness, ticket: string, type: string) =>
  (
    await h.deps.store.db
      .selectFrom('events')
      .select('payload')
      .where('campaign_id', '=', Number(ticket))
      .where('type', '=', type)
      .orderBy('id')
      .execute()
  ).map((e) => JSON.parse(e.payload));

const campaignOf = async (h: Harness, a: TestAccount, ticket: string) =>
  (await call(h.app, 'GET', `/campaign/${ticket}`, { token: a.token })).body.campaign[0];

describeEachDialect(
  'content rules and moderation',
  (h) => {
    const startWorker = deliveringWorkers(h);

    it('/operator/* answers -1 to any account not granted, whatever its body; the operator gets its answer', async () => {
      const a = await h().account({ credits: 5 });
      for (const [method, url, json] of [
        ['GET', '/operator/me', undefined],
        ['GET', '/operator/campaigns', undefined],
        ['GET', '/operator/senders', undefined],
        ['GET', '/operator/rules', undefined],
        ['POST', '/operator/rule', { nothing: 1 }],
        ['DELETE', '/operator/rule/1', undefined],
        ['PUT', '/operator/campaign/1/approve', undefined],
        ['PUT', '/operator/campaign/1/refuse', { reason: 'x' }],
        ['PUT', '/operator/sender/1/approve', undefined],
      ] as const) {
        const r = await call(h().app, method, url, { token: a.token, json });
        expect(r.body.status, `${method} ${url}`).toBe(-1);
        expect(r.body.details).toContain('not an operator account');
      }
      expect((await call(h().app, 'GET', '/operator/campaigns')).body.status).toBe(-1);
      const op = await operator(h());
      expect((await call(h().app, 'GET', '/operator/me', { token: op.token })).body).toMatchObject({
        status: 1,
        operator: true,
      });
      await h().deps.services.moderation.revokeOperator('cli', op.id);
      expect((await call(h().app, 'GET', '/operator/me', { token: op.token })).body.status).toBe(-1);
    });

    it('a bad rule is -7 naming what is wrong (a catastrophic pattern too); an unknown account -5', async () => {
      const op = await operator(h());
      const post = (rule: Record<string, unknown>) =>
        call(h().app, 'POST', '/operator/rule', { token: op.token, json: { rule } });
      const nested = await post({ kind: 'pattern', value: '(a+)+b', action: 'hold' });
      expect(nested.body.status).toBe(-7);
      expect(nested.body.details).toContain('nested quantifier');
      expect((await post({ kind: 'regex', value: 'x', action: 'hold' })).body.details).toContain(
        'kind "regex"',
      );
      expect((await post({ kind: 'word', value: 'x', action: 'drop' })).body.details).toContain(
        'action "drop"',
      );
      expect((await post({ kind: 'domain', value: 'not a domain', action: 'hold' })).body.status).toBe(-7);
      expect(
        (await post({ kind: 'word', value: 'x', action: 'hold', account_id: '99999999' })).body.status,
      ).toBe(-5);
    });

    it('a refusing rule refuses POST /send, GET /send and /send/lists naming the rule; nothing is charged or stored', async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 20 });
      const domain = await addRule(h(), op, {
        kind: 'domain',
        value: 'phish.example',
        action: 'refuse',
        account_id: String(a.id),
      });
      const word = await addRule(h(), op, {
        kind: 'word',
        value: 'lottery',
        action: 'refuse',
        account_id: String(a.id),
      });

      // A <-short-> target is checked: the link is not in the text.
      const short = await send(h(), a, 'Votre colis: <-short->', 1, ['https://login.phish.example/track']);
      expect(short.body.status).toBe(-7);
      expect(short.body.details).toContain(`rule ${domain.id} (domain "phish.example"`);
      expect(short.body.details).toContain('login.phish.example');

      const get = await call(h().app, 'GET', '/send', {
        query: { token: a.token, to: freshNumbers(1)[0].value, text: 'Go to www.phish.example now' },
      });
      expect(get.body.status).toBe(-7);
      expect(get.body.details).toContain(`rule ${domain.id}`);

      const list = await call(h().app, 'POST', '/list', {
        token: a.token,
        json: { list: { name: 'clients', contacts: { gsm: freshNumbers(3) } } },
      });
      const lists = await call(h().app, 'POST', '/send/lists', {
        token: a.token,
        json: { sms: { message: { text: 'Gagnez à la LOTTERY !' }, lists: [{ value: list.body.id }] } },
      });
      expect(lists.body.status).toBe(-7);
      expect(lists.body.details).toContain(`rule ${word.id} (word "lottery"`);

      expect(await credits(h(), a)).toBe(20);
      const campaigns = await call(h().app, 'GET', '/campaigns', { token: a.token });
      expect(campaigns.body.campaigns).toEqual([]);
      // Another account is not bound by the account's rules.
      const b = await h().account({ credits: 5 });
      expect((await send(h(), b, 'lottery at www.phish.example')).body.status).toBe(1);
    });

    it('a holding rule holds the campaign on POST /send, GET /send and /send/lists: charged, messages held, Moderation, a MODERATION event', async () => {
      const op = await operator(h());
      const parent = await h().account({ credits: 30 });
      const a = await h().account({ credits: 30, parentId: parent.id });
      // The parent's rule applies to its sub-account.
      await addRule(h(), op, {
        kind: 'pattern',
        value: 'promo\\s*code',
        action: 'hold',
        account_id: String(parent.id),
      });

      const post = await send(h(), a, 'Votre PROMO code: X1', 2);
      expect(post.body).toMatchObject({ status: 1, cost: 2, credits: 28, sent: 2, moderation: 'pending' });
      expect(post.body.held_by).toContain('matched "PROMO code"');
      const get = await call(h().app, 'GET', '/send', {
        query: { token: a.token, to: freshNumbers(1)[0].value, text: 'promocode inside' },
      });
      expect(get.body).toMatchObject({ status: 1, moderation: 'pending' });
      const list = await call(h().app, 'POST', '/list', {
        token: a.token,
        json: { list: { name: 'held', contacts: { gsm: freshNumbers(2) } } },
      });
      const lists = await call(h().app, 'POST', '/send/lists', {
        token: a.token,
        json: { sms: { message: { text: 'promo code [info1]' }, lists: [{ value: list.body.id }] } },
      });
      expect(lists.body).toMatchObject({ status: 1, moderation: 'pending', cost: 2 });
      // A simulation says it would be held, and holds nothing.
      const simulated = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        json: { sms: { message: { text: 'promo code' }, recipients: { gsm: freshNumbers(1) } } },
      });
      expect(simulated.body).toMatchObject({ status: 1, moderation: 'pending' });

      for (const ticket of [post.body.ticket, get.body.ticket, lists.body.ticket]) {
        expect((await messagesOf(h(), ticket)).every((m) => m.state === 'held')).toBe(true);
        expect(await campaignOf(h(), a, ticket)).toMatchObject({ status: 'Moderation', state: 'moderation' });
        const [event] = await eventsOf(h(), ticket, 'MODERATION');
        expect(event).toMatchObject({ campaign_id: ticket, status: 'pending' });
        expect(event.reason).toContain('pattern "promo\\s*code"');
      }
      expect(await credits(h(), a)).toBe(25);
      const queue = await call(h().app, 'GET', '/operator/campaigns', { token: op.token });
      expect(queue.body.campaigns.map((c: { id: string }) => c.id)).toEqual(
        expect.arrayContaining([post.body.ticket, get.body.ticket, lists.body.ticket]),
      );
      expect(queue.body.campaigns.find((c: { id: string }) => c.id === post.body.ticket)).toMatchObject({
        account_id: String(a.id),
        text: 'Votre PROMO code: X1',
        sent: 2,
        cost: 2,
      });
    });

    it('a refusal wins over a hold; a send no rule matches goes out as before', async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 10 });
      await addRule(h(), op, { kind: 'word', value: 'credit', action: 'hold', account_id: String(a.id) });
      const refuse = await addRule(h(), op, {
        kind: 'word',
        value: 'casino',
        action: 'refuse',
        account_id: String(a.id),
      });
      const both = await send(h(), a, 'credit au casino');
      expect(both.body.status).toBe(-7);
      expect(both.body.details).toContain(`rule ${refuse.id}`);
      const clean = await send(h(), a, 'Rendez-vous demain');
      expect(clean.body.status).toBe(1);
      expect(clean.body.moderation).toBeUndefined();
      expect((await messagesOf(h(), clean.body.ticket)).map((m) => m.state)).toEqual(['queued']);
    });

    it('approved: the held messages go out and their receipts come; refused: cancelled, refunded with a ledger line, nothing sent', async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 50 });
      await addRule(h(), op, { kind: 'word', value: 'soldes', action: 'hold', account_id: String(a.id) });
      const approvedOne = await send(h(), a, 'Les soldes commencent', 2);
      const refusedOne = await send(h(), a, 'Dernières soldes', 3);
      expect(await credits(h(), a)).toBe(45);
      await startWorker();
      // A campaign sent after them goes out while they wait: the worker runs, and leaves them held.
      const plain = await send(h(), a, 'Bonjour');
      await waitFor(
        async () => (await messagesOf(h(), plain.body.ticket)).every((m) => m.state === 'delivered'),
        'the plain campaign delivered',
      );
      expect((await messagesOf(h(), approvedOne.body.ticket)).map((m) => m.state)).toEqual(['held', 'held']);

      const approved = await call(h().app, 'PUT', `/operator/campaign/${approvedOne.body.ticket}/approve`, {
        token: op.token,
      });
      expect(approved.body).toMatchObject({
        status: 1,
        campaign: { id: approvedOne.body.ticket, status: 'approved', messages: 2, refunded: 0 },
      });
      await waitFor(
        async () => (await eventsOf(h(), approvedOne.body.ticket, 'DLR')).length === 2,
        'the DLR events of the approved campaign',
      );
      expect((await messagesOf(h(), approvedOne.body.ticket)).map((m) => [m.state, m.dlr_status])).toEqual([
        ['delivered', 3],
        ['delivered', 3],
      ]);
      expect(await campaignOf(h(), a, approvedOne.body.ticket)).toMatchObject({
        state: 'done',
        delivered: 2,
      });
      expect((await eventsOf(h(), approvedOne.body.ticket, 'MODERATION')).map((e) => e.status)).toEqual([
        'pending',
        'approved',
      ]);
      // Decided once: a second decision finds it no longer held.
      const again = await call(h().app, 'PUT', `/operator/campaign/${approvedOne.body.ticket}/refuse`, {
        token: op.token,
      });
      expect(again.body.status, again.body.details).toBe(-5);

      const refused = await call(h().app, 'PUT', `/operator/campaign/${refusedOne.body.ticket}/refuse`, {
        token: op.token,
        json: { reason: 'misleading' },
      });
      expect(refused.body.campaign).toMatchObject({ status: 'refused', messages: 3, refunded: 3 });
      expect(await credits(h(), a)).toBe(47);
      const ledger = await h()
        .deps.store.db.selectFrom('credit_ledger')
        .select(['delta', 'reason', 'campaign_id'])
        .where('campaign_id', '=', Number(refusedOne.body.ticket))
        .orderBy('id')
        .execute();
      expect(ledger).toEqual([
        { delta: -3, reason: 'campaign', campaign_id: Number(refusedOne.body.ticket) },
        { delta: 3, reason: 'refund', campaign_id: Number(refusedOne.body.ticket) },
      ]);
      expect(await campaignOf(h(), a, refusedOne.body.ticket)).toMatchObject({
        status: 'Refused',
        state: 'refused',
        cost: 0,
      });
      const refusedEvents = await eventsOf(h(), refusedOne.body.ticket, 'MODERATION');
      expect(refusedEvents.at(-1)).toMatchObject({ status: 'refused', reason: 'misleading' });
      // Nothing of it was sent: a later campaign delivered proves the worker ran meanwhile.
      const after = await send(h(), a, 'Bonsoir');
      await waitFor(
        async () => (await messagesOf(h(), after.body.ticket)).every((m) => m.state === 'delivered'),
        'a later campaign delivered',
      );
      expect(await messagesOf(h(), refusedOne.body.ticket)).toEqual([
        { state: 'cancelled', dlr_status: null, sent_at: null },
        { state: 'cancelled', dlr_status: null, sent_at: null },
        { state: 'cancelled', dlr_status: null, sent_at: null },
      ]);
      expect(await eventsOf(h(), refusedOne.body.ticket, 'DLR')).toEqual([]);
      const cancel = await call(h().app, 'DELETE', `/send/${refusedOne.body.ticket}`, { token: a.token });
      expect(cancel.body.status).toBe(-7);
    });

    it("an account's unlock leaves its held campaigns held, and releases one approved while locked; the customer may cancel one", async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 10 });
      await addRule(h(), op, { kind: 'word', value: 'bitcoin', action: 'hold', account_id: String(a.id) });
      const held = await send(h(), a, 'bitcoin offer', 2);
      const { accounts } = h().deps.services;
      await accounts.operatorLock(a.id);
      await accounts.operatorUnlock(a.id);
      expect((await messagesOf(h(), held.body.ticket)).map((m) => m.state)).toEqual(['held', 'held']);
      // Approved while its account is locked, a campaign stays held until the unlock.
      const second = await send(h(), a, 'bitcoin again');
      await accounts.operatorLock(a.id);
      const approved = await call(h().app, 'PUT', `/operator/campaign/${second.body.ticket}/approve`, {
        token: op.token,
      });
      expect(approved.body.campaign).toMatchObject({ status: 'approved', messages: 1 });
      expect((await messagesOf(h(), second.body.ticket)).map((m) => m.state)).toEqual(['held']);
      await accounts.operatorUnlock(a.id);
      expect((await messagesOf(h(), second.body.ticket)).map((m) => m.state)).toEqual(['queued']);
      expect((await messagesOf(h(), held.body.ticket)).map((m) => m.state)).toEqual(['held', 'held']);

      const cancel = await call(h().app, 'DELETE', `/send/${held.body.ticket}`, { token: a.token });
      expect(cancel.body).toMatchObject({ status: 1, credits: 9 });
      expect((await messagesOf(h(), held.body.ticket)).map((m) => m.state)).toEqual([
        'cancelled',
        'cancelled',
      ]);
      const queue = await call(h().app, 'GET', '/operator/campaigns', { token: op.token });
      expect(queue.body.campaigns.map((c: { id: string }) => c.id)).not.toContain(held.body.ticket);
    });

    it('a MODERATION webhook tells the hold, then the refusal with its reason', async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 10 });
      await addRule(h(), op, { kind: 'word', value: 'jackpot', action: 'hold', account_id: String(a.id) });
      const receiver = await new WebhookReceiver().listen();
      const dispatcher = testDispatcher(h());
      try {
        const hook = await call(h().app, 'POST', '/webhook', {
          token: a.token,
          json: { webhook: { type: 'MODERATION', url: receiver.url() } },
        });
        expect(hook.body.status, hook.body.details).toBe(1);
        dispatcher.start();
        const held = await send(h(), a, 'Jackpot!');
        await call(h().app, 'PUT', `/operator/campaign/${held.body.ticket}/refuse`, {
          token: op.token,
          json: { reason: 'gambling' },
        });
        await waitFor(() => receiver.requests.length >= 2, 'two MODERATION deliveries');
        const bodies = receiver.requests.map((r) => JSON.parse(r.body));
        expect(bodies.map((b) => [b.campaign_id, b.status])).toEqual([
          [held.body.ticket, 'pending'],
          [held.body.ticket, 'refused'],
        ]);
        expect(bodies[0].reason).toContain('word "jackpot"');
        expect(bodies[1]).toMatchObject({ reason: 'gambling' });
        expect(bodies[1].date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      } finally {
        await dispatcher.stop();
        await receiver.close();
      }
    });

    it('an instance rule applies to every account; deleted, it applies no more', async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 10 });
      const rule = await addRule(h(), op, { kind: 'domain', value: 'spam.example', action: 'refuse' });
      expect((await send(h(), a, 'see spam.example')).body.status).toBe(-7);
      const rules = await call(h().app, 'GET', '/operator/rules', { token: op.token });
      expect(rules.body.rules.find((r: { id: string }) => r.id === rule.id)).toMatchObject({
        account_id: null,
        kind: 'domain',
        action: 'refuse',
      });
      const deleted = await call(h().app, 'DELETE', `/operator/rule/${rule.id}`, { token: op.token });
      expect(deleted.body).toMatchObject({ status: 1, deleted_id: rule.id });
      expect((await send(h(), a, 'see spam.example')).body.status).toBe(1);
    });
  },
  // The MODERATION webhook's receiver listens on loopback.
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);
