// The operator's moderation commands on the server's database: operator accounts, content rules, sender IDs
// and the moderation queue, each a JSON line, each refusing bad input with a message and exit code 1 or 2.
import { expect, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

let numberSeq = 0;
const send = (h: Harness, a: TestAccount, text: string, sender?: string) =>
  call(h.app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: {
        message: { text, ...(sender && { sender }) },
        recipients: { gsm: [{ value: `3361${String(6000100 + ++numberSeq).padStart(7, '0')}` }] },
      },
    },
  });

describeEachDialect(
  'moderation CLI',
  (h) => {
    const pigeon = (...args: string[]) => pigeonOn(h().databaseUrl, ...args);

    it('operator grant, list and revoke: the account’s token opens /operator/* and closes it again', async () => {
      const a = await h().account({ credits: 0 });
      const granted = await pigeon('operator', 'grant', String(a.id));
      expect(granted.code, granted.stderr).toBe(0);
      expect(JSON.parse(granted.stdout)).toEqual({ account_id: String(a.id), operator: true, changed: true });
      expect((await call(h().app, 'GET', '/operator/me', { token: a.token })).body.status).toBe(1);
      const listed = await pigeon('operator', 'list');
      expect(lines(listed.stdout).map((o) => o.account_id)).toContain(String(a.id));
      const revoked = await pigeon('operator', 'revoke', String(a.id));
      expect(JSON.parse(revoked.stdout)).toMatchObject({ operator: false, changed: true });
      expect((await call(h().app, 'GET', '/operator/me', { token: a.token })).body.status).toBe(-1);
      const unknown = await pigeon('operator', 'grant', '99999999');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('account "99999999" not found');
      const bad = await pigeon('operator', 'grant', 'x');
      expect(bad.code).toBe(2);
    });

    it('rule add, list and delete; a held campaign listed, then approved or refused with its refund', async () => {
      const a = await h().account({ credits: 10 });
      const added = await pigeon(
        'rule',
        'add',
        '--kind',
        'word',
        '--value',
        'crypto',
        '--action',
        'hold',
        '--account',
        String(a.id),
      );
      expect(added.code, added.stderr).toBe(0);
      const rule = JSON.parse(added.stdout);
      expect(rule).toMatchObject({ account_id: String(a.id), kind: 'word', value: 'crypto', action: 'hold' });
      expect(lines((await pigeon('rule', 'list', '--account', String(a.id))).stdout)).toEqual([rule]);
      const refused = await pigeon(
        'rule',
        'add',
        '--kind',
        'pattern',
        '--value',
        '(x+)+',
        '--action',
        'hold',
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('nested quantifier');

      const first = await send(h(), a, 'crypto news');
      const second = await send(h(), a, 'more crypto');
      expect([first.body.moderation, second.body.moderation]).toEqual(['pending', 'pending']);
      const queue = lines((await pigeon('moderation', 'list')).stdout).map((c) => c.id);
      expect(queue).toEqual(expect.arrayContaining([first.body.ticket, second.body.ticket]));

      const approved = await pigeon('moderation', 'approve', first.body.ticket);
      expect(JSON.parse(approved.stdout)).toEqual({
        id: first.body.ticket,
        status: 'approved',
        messages: 1,
        refunded: 0,
      });
      const refusedCampaign = await pigeon('moderation', 'refuse', second.body.ticket, '--reason', 'scam');
      expect(JSON.parse(refusedCampaign.stdout)).toEqual({
        id: second.body.ticket,
        status: 'refused',
        messages: 1,
        refunded: 1,
      });
      expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(9);
      const again = await pigeon('moderation', 'approve', second.body.ticket);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('is not held for moderation');

      const deleted = await pigeon('rule', 'delete', rule.id);
      expect(JSON.parse(deleted.stdout)).toEqual({ deleted_id: rule.id });
      expect(lines((await pigeon('rule', 'list', '--account', String(a.id))).stdout)).toEqual([]);
    });

    it('sender list, approve and refuse: an approved sender sends (SENDER_APPROVAL=required)', async () => {
      const a = await h().account({ credits: 10 });
      const asked = await call(h().app, 'POST', '/sender', {
        token: a.token,
        json: { sender: { sender: 'Fleur' } },
      });
      const other = await call(h().app, 'POST', '/sender', {
        token: a.token,
        json: { sender: { sender: 'Epine' } },
      });
      const pending = lines((await pigeon('sender', 'list', '--state', 'pending')).stdout).map(
        (s) => s.sender,
      );
      expect(pending).toEqual(expect.arrayContaining(['Fleur', 'Epine']));
      const approved = await pigeon('sender', 'approve', asked.body.sender.id);
      expect(JSON.parse(approved.stdout)).toMatchObject({ sender: 'Fleur', state: 'approved' });
      const refused = await pigeon(
        'sender',
        'refuse',
        other.body.sender.id,
        '--reason',
        'too close to a brand',
      );
      expect(JSON.parse(refused.stdout)).toMatchObject({ state: 'refused', reason: 'too close to a brand' });
      expect((await send(h(), a, 'Bonjour', 'Fleur')).body.status).toBe(1);
      expect((await send(h(), a, 'Bonjour', 'Epine')).body.status).toBe(-7);
      const badState = await pigeon('sender', 'list', '--state', 'maybe');
      expect(badState.code).toBe(1);
      expect(badState.stderr).toContain('state "maybe"');
    });
  },
  { SENDER_APPROVAL: 'required' },
);
