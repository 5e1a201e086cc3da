// The operator's commands on accounts and tokens, run as `pigeon …` processes beside a running API on the same
// database: account list/show/lock/unlock, token list/revoke. The operator's lock reuses the parent's (the same
// column, the same refusals, the queue held) and only the operator lifts it; a lock or a revocation reaches the
// running server within the second its tokens are kept in memory.
import { expect, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

/** Each command is a process of its own: several seconds each on a loaded two-core machine. */
const manyCallsMs = 120_000;
const password = 'correct horse battery';

describeEachDialect('operator commands', (h) => {
  const pigeon = async (...args: string[]) => {
    const r = await pigeonOn(h().databaseUrl, ...args);
    return {
      ...r,
      lines:
        r.stdout === ''
          ? []
          : r.stdout
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l)),
    };
  };
  const credits = async (token: string) => (await call(h().app, 'GET', '/credits', { token })).body;

  it(
    'account list prints one JSON line per account; account show one account with its sub-accounts',
    async () => {
      const parent = await h().account({ credits: 70 });
      const child = await h().account({ parentId: parent.id, unlimited: true, credits: 0 });

      const list = await pigeon('account', 'list');
      expect(list.code, list.stderr).toBe(0);
      const ids = list.lines.map((a) => Number(a.account_id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      const [listedParent] = list.lines.filter((a) => a.account_id === String(parent.id));
      expect(listedParent).toEqual({
        account_id: String(parent.id),
        parent_id: null,
        email: expect.stringMatching(/@example\.com$/),
        company: '',
        credits: 70,
        unlimited: false,
        state: 'active',
        locked_by: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      });
      expect(list.lines.find((a) => a.account_id === String(child.id))).toMatchObject({
        parent_id: String(parent.id),
        unlimited: true,
      });

      const shown = await pigeon('account', 'show', String(parent.id));
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.lines).toEqual([
        {
          ...listedParent,
          spendable_credits: 70,
          first_name: '',
          last_name: '',
          phone: '',
          sender: '',
          sub_accounts: 1,
          postpaid: '0',
          credit_limit: null,
          limits: {
            daily_messages: { value: 0, from: 'instance' },
            monthly_messages: { value: 0, from: 'instance' },
            requests_per_second: { value: 0, from: 'instance', counted: 'per token' },
            parts_per_second: { value: 0, from: 'instance' },
            countries: { value: 'all', from: 'instance' },
          },
        },
      ]);
      // The unlimited sub-account spends its parent's credits.
      expect((await pigeon('account', 'show', String(child.id))).lines[0]).toMatchObject({
        credits: 0,
        spendable_credits: 70,
        sub_accounts: 0,
      });

      const unknown = await pigeon('account', 'show', '999999');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/account 999999 does not exist/);
      const bad = await pigeon('account', 'lock', 'abc');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/ID must be a positive integer/);
    },
    manyCallsMs,
  );

  it(
    "account lock stops the account's tokens and console sign-in in the running server; its parent cannot unlock it; account unlock does",
    async () => {
      const parent = await h().account();
      const child = await h().account({ parentId: parent.id });
      expect((await credits(child.token)).status).toBe(1);
      const email = (await pigeon('account', 'show', String(child.id))).lines[0].email as string;
      expect(
        (await call(h().app, 'POST', '/console/session', { json: { email, password } })).body.status,
      ).toBe(1);

      const locked = await pigeon('account', 'lock', String(child.id));
      expect(locked.code, locked.stderr).toBe(0);
      expect(locked.lines).toEqual([
        { account_id: String(child.id), state: 'locked', changed: true, held_messages: 0 },
      ]);
      const refusal = {
        status: -1,
        message: 'Authentication error',
        details: `account ${child.id} is locked by the operator: it cannot use the API until the operator unlocks it`,
      };
      // The server (another process) keeps a token in memory for a second at most: its clock moves on by one.
      h().clock.advance(1_000);
      expect(await credits(child.token)).toEqual(refusal);
      expect((await call(h().app, 'POST', '/console/session', { json: { email, password } })).body).toEqual(
        refusal,
      );
      expect((await pigeon('account', 'show', String(child.id))).lines[0]).toMatchObject({
        state: 'locked',
        locked_by: 'operator',
      });

      // Its parent sees it locked, and cannot lift the operator's lock.
      const sub = await call(h().app, 'GET', `/sub-accounts/${child.id}`, { token: parent.token });
      expect(sub.body['sub-account']).toMatchObject({ status: 0, state: 'locked' });
      const parentUnlock = await call(h().app, 'GET', `/account/${child.id}/unlock`, { token: parent.token });
      expect(parentUnlock.body).toMatchObject({
        status: -7,
        details: `account ${child.id} is locked by the operator: only the operator can unlock it`,
      });
      expect((await credits(child.token)).status).toBe(-1);

      // Locking again changes nothing and says so; a top-level account is locked the same way.
      expect((await pigeon('account', 'lock', String(child.id))).lines[0]).toMatchObject({ changed: false });
      expect((await pigeon('account', 'lock', String(parent.id))).code).toBe(0);
      h().clock.advance(1_000);
      expect((await credits(parent.token)).status).toBe(-1);

      for (const id of [child.id, parent.id]) {
        const unlocked = await pigeon('account', 'unlock', String(id));
        expect(unlocked.lines).toEqual([
          { account_id: String(id), state: 'unlocked', changed: true, released_messages: 0 },
        ]);
      }
      h().clock.advance(1_000);
      expect((await credits(child.token)).status).toBe(1);
      expect((await credits(parent.token)).status).toBe(1);
      expect(
        (await call(h().app, 'POST', '/console/session', { json: { email, password } })).body.status,
      ).toBe(1);
    },
    manyCallsMs,
  );

  it(
    "an operator's unlock lifts a parent's lock too; a parent's lock does not undo the operator's",
    async () => {
      const parent = await h().account();
      const child = await h().account({ parentId: parent.id });
      await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token });
      expect((await pigeon('account', 'show', String(child.id))).lines[0]).toMatchObject({
        locked_by: 'parent',
      });
      // The operator's lock takes over the parent's: the parent can no longer unlock it.
      expect((await pigeon('account', 'lock', String(child.id))).lines[0]).toMatchObject({ changed: true });
      const parentLockAgain = await call(h().app, 'GET', `/account/${child.id}/lock`, {
        token: parent.token,
      });
      expect(parentLockAgain.body).toMatchObject({ status: 1, state: 'locked' });
      expect((await pigeon('account', 'show', String(child.id))).lines[0]).toMatchObject({
        locked_by: 'operator',
      });
      expect((await pigeon('account', 'unlock', String(child.id))).lines[0]).toMatchObject({ changed: true });
      h().clock.advance(1_000);
      expect((await credits(child.token)).status).toBe(1);
    },
    manyCallsMs,
  );

  it(
    "the operator's lock holds the account's queued messages, unsent; its unlock queues them again",
    async () => {
      const a = await h().account();
      const sent = await call(h().app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Hello', pushtype: 'alert', sender: 'Pigeon' },
            recipients: { gsm: [{ value: '33612345655' }, { value: '33612345665' }] },
          },
        },
      });
      expect(sent.body.status, sent.body.details).toBe(1);
      const states = async () =>
        (
          await h()
            .deps.store.db.selectFrom('messages')
            .select('state')
            .where('campaign_id', '=', Number(sent.body.ticket))
            .execute()
        ).map((m) => m.state);
      expect(await states()).toEqual(['queued', 'queued']);

      expect((await pigeon('account', 'lock', String(a.id))).lines[0]).toMatchObject({ held_messages: 2 });
      expect(await states()).toEqual(['held', 'held']);
      expect((await pigeon('account', 'unlock', String(a.id))).lines[0]).toMatchObject({
        released_messages: 2,
      });
      expect(await states()).toEqual(['queued', 'queued']);
    },
    manyCallsMs,
  );

  it(
    'token list shows an account’s tokens without their secret; token revoke stops one in the running server',
    async () => {
      const a = await h().account();
      const created = await pigeon('token', 'create', String(a.id), '--name', 'deploy');
      const { token_id, token } = created.lines[0];
      expect((await credits(token)).status).toBe(1);

      const list = await pigeon('token', 'list', '--account', String(a.id));
      expect(list.code, list.stderr).toBe(0);
      expect(list.lines.map((t) => [t.account_id, t.name])).toEqual([
        [String(a.id), 'default'],
        [String(a.id), 'deploy'],
      ]);
      expect(list.lines[1]).toEqual({
        account_id: String(a.id),
        api_token_id: token_id,
        name: 'deploy',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        expired_at: null,
        ttl: null,
        is_active: 1,
        allowed_ips: [],
        last_used_at: expect.any(String),
        scope: 'full',
      });
      expect(list.stdout).not.toContain(token);

      const revoked = await pigeon('token', 'revoke', token_id);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.lines).toEqual([{ token_id, account_id: String(a.id), revoked: true }]);
      h().clock.advance(1_000);
      expect((await credits(token)).status).toBe(-1);
      expect((await credits(a.token)).status).toBe(1);
      expect((await pigeon('token', 'list', '--account', String(a.id))).lines.map((t) => t.name)).toEqual([
        'default',
      ]);

      const again = await pigeon('token', 'revoke', token_id);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(new RegExp(`token ${token_id} does not exist`));
      const noAccount = await pigeon('token', 'list');
      expect(noAccount.code).toBe(2);
      expect(noAccount.stderr).toMatch(/--account must be a positive integer/);
    },
    manyCallsMs,
  );
});
