// SENDER_APPROVAL=required: an account sends only from the sender IDs the operator approved for it or its
// parent; it asks for one with POST /sender, the operator decides through /operator/*.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

let numberSeq = 0;
const freshNumber = () => `3361${String(4000100 + ++numberSeq).padStart(7, '0')}`;

async function operator(h: Harness): Promise<TestAccount> {
  const a = await h.account({ credits: 0 });
  await h.deps.services.moderation.grantOperator('cli', a.id);
  return a;
}

const sendFrom = (h: Harness, a: TestAccount, sender: string | undefined) =>
  call(h.app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: {
        message: { text: 'Votre code: 1234', ...(sender && { sender }) },
        recipients: { gsm: [{ value: freshNumber() }] },
      },
    },
  });

const credits = async (h: Harness, a: TestAccount) =>
  (await call(h.app, 'GET', '/credits', { token: a.token })).body.credits;

describeEachDialect(
  'sender IDs',
  (h) => {
    it('a sender not approved is refused on POST /send, GET /send and /send/lists, naming it; nothing is charged', async () => {
      const a = await h().account({ credits: 10 });
      const post = await sendFrom(h(), a, 'Acme');
      expect(post.body).toMatchObject({ status: -7 });
      expect(post.body.details).toContain('sender "Acme" is not an approved sender ID');
      const get = await call(h().app, 'GET', '/send', {
        query: { token: a.token, to: freshNumber(), text: 'Bonjour', sender: 'Acme' },
      });
      expect(get.body.status).toBe(-7);
      expect(get.body.details).toContain('"Acme"');
      const list = await call(h().app, 'POST', '/list', {
        token: a.token,
        json: { list: { name: 'l', contacts: { gsm: [{ value: freshNumber() }] } } },
      });
      const lists = await call(h().app, 'POST', '/send/lists', {
        token: a.token,
        json: { sms: { message: { text: 'Promo', sender: 'Acme' }, lists: [{ value: list.body.id }] } },
      });
      expect(lists.body.status).toBe(-7);
      expect(lists.body.details).toContain('"Acme"');
      expect(await credits(h(), a)).toBe(10);
      // A send naming no sender takes the instance's default, which is the operator's: it goes.
      expect((await sendFrom(h(), a, undefined)).body.status).toBe(1);
    });

    it('an account asks for a sender ID, the operator approves it, and then it sends; its sub-accounts too', async () => {
      const op = await operator(h());
      const parent = await h().account({ credits: 10 });
      const child = await h().account({ credits: 10, parentId: parent.id });
      const other = await h().account({ credits: 10 });
      const asked = await call(h().app, 'POST', '/sender', {
        token: parent.token,
        json: { sender: { sender: 'Boulang', note: 'our bakery' } },
      });
      expect(asked.body).toMatchObject({
        status: 1,
        sender: {
          sender: 'Boulang',
          state: 'pending',
          note: 'our bakery',
          account_id: String(parent.id),
          decided_at: null,
        },
      });
      const mine = await call(h().app, 'GET', '/sender', { token: parent.token });
      expect(mine.body.senders.map((s: { sender: string }) => s.sender)).toEqual(['Boulang']);
      expect((await call(h().app, 'GET', '/sender', { token: other.token })).body.senders).toEqual([]);
      expect((await sendFrom(h(), parent, 'Boulang')).body.status).toBe(-7);

      const pending = await call(h().app, 'GET', '/operator/senders', {
        token: op.token,
        query: { state: 'pending' },
      });
      expect(pending.body.senders.map((s: { id: string }) => s.id)).toContain(asked.body.sender.id);
      const approved = await call(h().app, 'PUT', `/operator/sender/${asked.body.sender.id}/approve`, {
        token: op.token,
      });
      expect(approved.body.sender).toMatchObject({ state: 'approved' });
      expect(approved.body.sender.decided_at).not.toBeNull();

      expect((await sendFrom(h(), parent, 'Boulang')).body.status).toBe(1);
      expect((await sendFrom(h(), child, 'Boulang')).body.status).toBe(1);
      const stranger = await sendFrom(h(), other, 'Boulang');
      expect(stranger.body.status).toBe(-7);
    });

    it('a refused request keeps refusing the sender and tells the reason; asked again it is pending again', async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 10 });
      const asked = await call(h().app, 'POST', '/sender', {
        token: a.token,
        json: { sender: { sender: 'BANK' } },
      });
      const refused = await call(h().app, 'PUT', `/operator/sender/${asked.body.sender.id}/refuse`, {
        token: op.token,
        json: { reason: 'impersonates a bank' },
      });
      expect(refused.body.sender).toMatchObject({ state: 'refused', reason: 'impersonates a bank' });
      expect((await sendFrom(h(), a, 'BANK')).body.status).toBe(-7);
      const mine = await call(h().app, 'GET', '/sender', { token: a.token });
      expect(mine.body.senders[0]).toMatchObject({
        sender: 'BANK',
        state: 'refused',
        reason: 'impersonates a bank',
      });
      const again = await call(h().app, 'POST', '/sender', {
        token: a.token,
        json: { sender: { sender: 'BANK' } },
      });
      expect(again.body.sender).toMatchObject({ id: asked.body.sender.id, state: 'pending', reason: '' });
    });

    it('a bad sender request is -7 naming the field; an unknown request is -5 for the operator', async () => {
      const op = await operator(h());
      const a = await h().account({ credits: 1 });
      const bad = await call(h().app, 'POST', '/sender', {
        token: a.token,
        json: { sender: { sender: 'a b' } },
      });
      expect(bad.body).toMatchObject({ status: -7 });
      expect(bad.body.details).toContain('sender.sender "a b"');
      const missing = await call(h().app, 'POST', '/sender', { token: a.token, json: { sender: {} } });
      expect(missing.body.status).toBe(-7);
      const unknown = await call(h().app, 'PUT', '/operator/sender/999999/approve', { token: op.token });
      expect(unknown.body.status).toBe(-5);
    });
  },
  { SENDER_APPROVAL: 'required' },
);
