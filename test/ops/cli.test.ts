// The `pigeon` command, run as a child process on the same database the server has open.
import { expect, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

/**
 * Each call starts a whole process (Node, the TypeScript loader, the store): about a second on an idle
 * machine, several on a loaded two-core one. Tests that make many calls get this much time instead of the
 * default 30 s, so they measure behaviour, not the machine's load.
 */
const manyCallsMs = 120_000;

const pigeon = pigeonOn;

describeEachDialect('pigeon CLI', (h) => {
  it(
    'account create prints one JSON line whose token works against the running server',
    async () => {
      const r = await pigeon(
        h().databaseUrl,
        'account',
        'create',
        '--email',
        'cli@example.com',
        '--password',
        'hunter22!',
        '--credits',
        '250',
      );
      expect(r.code).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      const created = JSON.parse(lines[0]);
      expect(created).toEqual({
        account_id: expect.stringMatching(/^\d+$/),
        token: expect.stringMatching(/^[0-9A-Za-z]{43}$/),
      });
      const credits = await call(h().app, 'GET', '/credits', { token: created.token });
      expect(credits.body).toEqual({ status: 1, message: 'OK', credits: 250, postpaid: '0', unlimited: '0' });
      const tokens = await call(h().app, 'GET', '/token', { token: created.token });
      expect(tokens.body.tokens.map((t: { name: string }) => t.name)).toEqual(['default']);
    },
    manyCallsMs,
  );

  it(
    'credits add and token create act on the account',
    async () => {
      const a = await h().account({ credits: 10 });
      const added = await pigeon(h().databaseUrl, 'credits', 'add', String(a.id), '90');
      expect(JSON.parse(added.stdout)).toEqual({ account_id: String(a.id), credits: 100 });
      expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(100);
      const token = await pigeon(h().databaseUrl, 'token', 'create', String(a.id), '--name', 'deploy');
      const created = JSON.parse(token.stdout);
      expect(Object.keys(created)).toEqual(['token_id', 'token']);
      expect((await call(h().app, 'GET', '/credits', { token: created.token })).body.credits).toBe(100);
    },
    manyCallsMs,
  );

  it(
    'a sub-account is created with --parent and --unlimited',
    async () => {
      const parent = await h().account({ credits: 40 });
      const r = await pigeon(
        h().databaseUrl,
        'account',
        'create',
        '--email',
        `child-${parent.id}@example.com`,
        '--password',
        'hunter22!',
        '--parent',
        String(parent.id),
        '--unlimited',
      );
      const child = JSON.parse(r.stdout);
      expect((await call(h().app, 'GET', '/credits', { token: child.token })).body.credits).toBe(40);
    },
    manyCallsMs,
  );

  it(
    'mistakes exit non-zero with a clear message and no stack trace',
    async () => {
      const cases: [string[], RegExp][] = [
        [['credits', 'add', 'x', '5'], /ACCOUNT_ID must be a positive integer/],
        [['token', 'create', '999999', '--name', 'n'], /account 999999 does not exist/],
        [['account', 'create', '--email', 'bad'], /needs --email and --password/],
        [['account', 'create', '--email', 'dup@example.com', '--password', 'short'], /at least 8 characters/],
        [['frobnicate'], /unknown command "frobnicate"/],
      ];
      const results = await Promise.all(cases.map(([args]) => pigeon(h().databaseUrl, ...args)));
      cases.forEach(([args, message], i) => {
        const r = results[i];
        expect(r.code, args.join(' ')).not.toBe(0);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      });
    },
    manyCallsMs,
  );

  it(
    'simulate mo records a reply for the account that wrote to the number, STOP included',
    async () => {
      const a = await h().account();
      const sent = await call(h().app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Hi', pushtype: 'alert' },
            recipients: { gsm: [{ value: '33655500011', gsmsmsid: 'g1' }] },
          },
        },
      });
      expect(sent.body.status).toBe(1);
      const mo = await pigeon(
        h().databaseUrl,
        'simulate',
        'mo',
        '--from',
        '33655500011',
        '--text',
        'Bonjour',
      );
      expect(JSON.parse(mo.stdout)).toEqual({
        type: 'MO',
        account_id: String(a.id),
        from: '33655500011',
        text: 'Bonjour',
      });
      const stop = await pigeon(
        h().databaseUrl,
        'simulate',
        'mo',
        '--from',
        '+33655500011',
        '--text',
        'stop',
      );
      expect(JSON.parse(stop.stdout)).toMatchObject({ type: 'STOP' });
      const events = await h()
        .deps.store.db.selectFrom('events')
        .select(['type', 'payload'])
        .where('account_id', '=', a.id)
        .orderBy('id')
        .execute();
      expect(events.map((e) => e.type)).toEqual(['MO', 'STOP']);
      expect(JSON.parse(events[0].payload)).toMatchObject({
        message: 'Bonjour',
        from: '33655500011',
        last_message_id: 'g1',
      });
      const nobody = await pigeon(
        h().databaseUrl,
        'simulate',
        'mo',
        '--from',
        '33600000999',
        '--text',
        'hello?',
      );
      expect(nobody.code).not.toBe(0);
      expect(nobody.stderr).toMatch(/no account has written to 33600000999/);
    },
    manyCallsMs,
  );

  it(
    'migrate is idempotent',
    async () => {
      const r = await pigeon(h().databaseUrl, 'migrate');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ migrated: true });
    },
    manyCallsMs,
  );
});
