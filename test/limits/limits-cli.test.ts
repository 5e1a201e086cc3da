// Setting limits: `pigeon account limits` beside a running API on the same database, the operator's
// /operator/accounts/:id/limits, and GET /account/limits, where an account reads its own. Every bad input is a
// clear error in the envelope (or on the CLI's stderr), never a 500; every change is audited.
import { expect, it } from 'vitest';
import { pigeonWith } from '../helpers/cli.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

/** Each command is a process of its own: several seconds each on a loaded two-core machine. */
const manyCallsMs = 120_000;

const instanceLimits = {
  daily_messages: { value: 0, from: 'instance' },
  monthly_messages: { value: 100, from: 'instance' },
  requests_per_second: { value: 0, from: 'instance', counted: 'per token' },
  parts_per_second: { value: 0, from: 'instance' },
  countries: { value: 'all', from: 'instance' },
};

describeEachDialect(
  'limits commands and routes',
  (h) => {
    const pigeon = async (...args: string[]) => {
      // The CLI on the server's environment: its instance defaults are the server's.
      const r = await pigeonWith({ DATABASE_URL: h().databaseUrl, MONTHLY_MESSAGE_LIMIT: '100' }, ...args);
      return { ...r, json: r.stdout === '' ? undefined : JSON.parse(r.stdout) };
    };

    it(
      'account limits sets, shows with whose each limit is, and clears; a running server applies it within a second',
      async () => {
        const parent = await h().account();
        const sub = await h().account({ parentId: parent.id });
        const set = await pigeon(
          'account',
          'limits',
          String(parent.id),
          '--daily',
          '50',
          '--countries',
          'be,FR',
        );
        expect(set.code, set.stderr).toBe(0);
        expect(set.json).toMatchObject({
          account_id: String(parent.id),
          parent_id: null,
          own: { daily_messages: 50, countries: 'BE,FR', monthly_messages: null },
          limits: {
            daily_messages: { value: 50, from: 'account' },
            countries: { value: 'BE,FR', from: 'account' },
          },
        });
        const subSet = await pigeon(
          'account',
          'limits',
          String(sub.id),
          '--rps',
          '7',
          '--parts-per-second',
          '30',
        );
        expect(subSet.code, subSet.stderr).toBe(0);
        const shown = await pigeon('account', 'limits', String(sub.id));
        expect(shown.json).toEqual({
          account_id: String(sub.id),
          parent_id: String(parent.id),
          own: {
            daily_messages: null,
            monthly_messages: null,
            requests_per_second: 7,
            parts_per_second: 30,
            countries: null,
          },
          limits: {
            daily_messages: { value: 50, from: 'parent' },
            monthly_messages: { value: 100, from: 'instance' },
            requests_per_second: { value: 7, from: 'account', counted: 'per account' },
            parts_per_second: { value: 30, from: 'account' },
            countries: { value: 'BE,FR', from: 'parent' },
          },
        });
        // `account show` says it too, with postpaid and the credit limit.
        await pigeon('account', 'postpaid', String(sub.id), '--limit', '20');
        const account = await pigeon('account', 'show', String(sub.id));
        expect(account.json).toMatchObject({ postpaid: '1', credit_limit: 20, limits: shown.json.limits });

        // The running server reads it again once its second has passed: the account reads its own limits.
        h().clock.advance(1500);
        const own = await call(h().app, 'GET', '/account/limits', { token: sub.token });
        expect(own.body).toEqual({ status: 1, message: 'OK', limits: shown.json.limits });

        // inherit one; clear all.
        const inherit = await pigeon('account', 'limits', String(sub.id), '--rps', 'inherit');
        expect(inherit.json.own.requests_per_second).toBeNull();
        const cleared = await pigeon('account', 'limits', String(parent.id), '--clear');
        expect(cleared.json.own).toEqual({
          daily_messages: null,
          monthly_messages: null,
          requests_per_second: null,
          parts_per_second: null,
          countries: null,
        });
        expect(cleared.json.limits).toEqual(instanceLimits);

        // Each change is an entry of the account's audit log, the CLI's.
        const entries = await h()
          .deps.store.db.selectFrom('audit_log')
          .select(['account_id', 'action', 'actor_kind'])
          .where('action', '=', 'account.limits')
          .where('account_id', 'in', [parent.id, sub.id])
          .orderBy('id')
          .execute();
        expect(entries.map((e) => [Number(e.account_id), e.actor_kind])).toEqual([
          [parent.id, 'cli'],
          [sub.id, 'cli'],
          [sub.id, 'cli'],
          [parent.id, 'cli'],
        ]);
      },
      manyCallsMs,
    );

    it(
      'bad values are refused naming each, and nothing changes; an unknown account is named',
      async () => {
        const a = await h().account();
        const bad = await pigeon(
          'account',
          'limits',
          String(a.id),
          '--daily=-3',
          '--rps',
          'lots',
          '--countries',
          'FR,ZZ',
        );
        expect(bad.code).toBe(1);
        expect(bad.stderr).toContain(
          'daily_messages "-3" must be a whole number from 0 (no limit) to 1000000000, or inherit',
        );
        expect(bad.stderr).toContain('requests_per_second "lots" must be a whole number');
        expect(bad.stderr).toContain('ZZ is not a country the numbering plan knows');
        expect((await pigeon('account', 'limits', String(a.id))).json.own.daily_messages).toBeNull();
        const both = await pigeon('account', 'limits', String(a.id), '--clear', '--daily', '5');
        expect(both.code).toBe(2);
        expect(both.stderr).toContain('account limits takes --clear alone');
        const unknown = await pigeon('account', 'limits', '999999', '--daily', '5');
        expect(unknown.code).toBe(1);
        expect(unknown.stderr).toContain('account 999999 does not exist');
      },
      manyCallsMs,
    );

    it('the operator routes: an operator account reads and changes any account; any other token gets -1', async () => {
      const operator = await h().account();
      const customer = await h().account();
      await h().deps.services.moderation.grantOperator('cli', operator.id);
      const url = `/operator/accounts/${customer.id}/limits`;

      const refused = await call(h().app, 'PUT', url, {
        token: customer.token,
        json: { limits: { daily_messages: 1_000_000 } },
      });
      expect(refused.body).toMatchObject({ status: -1 });
      expect((await call(h().app, 'GET', url, { token: customer.token })).body.status).toBe(-1);

      const put = await call(h().app, 'PUT', url, {
        token: operator.token,
        json: { limits: { monthly_messages: '500', parts_per_second: 25, countries: 'all' } },
      });
      expect(put.body).toMatchObject({
        status: 1,
        account: {
          account_id: String(customer.id),
          own: { monthly_messages: 500, parts_per_second: 25, countries: 'all', daily_messages: null },
          limits: {
            monthly_messages: { value: 500, from: 'account' },
            countries: { value: 'all', from: 'account' },
          },
        },
      });
      // In this process the change applies at once.
      expect((await call(h().app, 'GET', '/account/limits', { token: customer.token })).body.limits).toEqual(
        put.body.account.limits,
      );
      const entry = await h()
        .deps.store.db.selectFrom('audit_log')
        .select(['account_id', 'actor_kind', 'object_id'])
        .where('action', '=', 'account.limits')
        .where('account_id', '=', customer.id)
        .executeTakeFirstOrThrow();
      expect(entry).toMatchObject({ actor_kind: 'token', object_id: String(customer.id) });

      expect((await call(h().app, 'GET', url, { token: operator.token })).body.account).toEqual(
        put.body.account,
      );
      const deleted = await call(h().app, 'DELETE', url, { token: operator.token });
      expect(deleted.body.account.limits).toEqual(instanceLimits);
    });

    it('bad requests to the operator routes are errors in the envelope, never a 500', async () => {
      const operator = await h().account();
      const customer = await h().account();
      await h().deps.services.moderation.grantOperator('cli', operator.id);
      const put = (url: string, json: unknown) => call(h().app, 'PUT', url, { token: operator.token, json });
      const url = `/operator/accounts/${customer.id}/limits`;
      const cases: [string, unknown, number, string][] = [
        [url, { limits: { daily_messages: 1.5 } }, -7, 'daily_messages "1.5" must be a whole number'],
        [url, { limits: { requests_per_second: 2_000_000 } }, -7, 'from 0 (no limit) to 1000000'],
        [url, { limits: { countries: ['FR'] } }, -7, 'countries "FR" must be ISO country codes'],
        [url, { limits: { countries: '' } }, -7, 'must be ISO country codes'],
        [url, { limits: {} }, -7, 'give at least one limit to change'],
        ['/operator/accounts/abc/limits', { limits: { daily_messages: 5 } }, -5, 'account "abc" not found'],
        [
          '/operator/accounts/999999/limits',
          { limits: { daily_messages: 5 } },
          -5,
          'account 999999 does not exist',
        ],
      ];
      for (const [path, json, status, details] of cases) {
        const r = await put(path, json);
        expect(r.httpCode, JSON.stringify(json)).toBeLessThan(500);
        expect(r.body.status, JSON.stringify(r.body)).toBe(status);
        expect(r.body.details).toContain(details);
      }
      // A body without `limits`, or not JSON: the envelope's own errors.
      for (const json of [{}, { limits: 'x' }, []]) {
        const r = await put(url, json);
        expect(r.httpCode).toBeLessThan(500);
        expect(r.body.status).toBeLessThan(0);
      }
      const notJson = await call(h().app, 'PUT', url, {
        token: operator.token,
        body: '{',
        contentType: 'application/json',
      });
      expect(notJson.httpCode).toBeLessThan(500);
      expect(notJson.body.status).toBeLessThan(0);
      expect((await h().deps.services.limits.show('cli', customer.id)).own.daily_messages).toBeNull();
    });
  },
  { MONTHLY_MESSAGE_LIMIT: '100' },
);
