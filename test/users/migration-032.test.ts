// Accounts, tokens and console sessions of the version before users (migration 031) keep working after 032:
// each account's e-mail and password sign its new owner user in, an open session is that owner's, and every
// token keeps full access. On SQLite and on PostgreSQL.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/accounts/secrets.ts';
import type { Store } from '../../src/store/db.ts';
import { availableDialects, call, createHarness, type Harness } from '../helpers/harness.ts';
import { migrateThrough } from '../helpers/migrate-through.ts';
import { consoleSignIn, sessionCall } from './users-fixture.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const password = 'an old account password';
const oldToken = 'T'.repeat(43);
const oldCookie = 'an-old-session-cookie';
const oldCsrf = 'an-old-csrf-token';

/** Two accounts, a token and an open console session, as the version that ended at 031 stored them. */
async function seedAt031(store: Store): Promise<void> {
  await migrateThrough(store, '031-hot-foreign-keys');
  // biome-ignore lint/suspicious/noExplicitAny: the schema of an older version.
  const db = store.db as Kysely<any>;
  const at = Date.now();
  const passwordHash = await hashPassword(password);
  for (const email of ['first@example.com', 'second@example.com']) {
    await db
      .insertInto('accounts')
      .values({ email, password_hash: passwordHash, credits: 10, unlimited: 0, created_at: at })
      .execute();
  }
  await db
    .insertInto('tokens')
    .values({ account_id: 2, name: 'old', token_hash: sha256(oldToken), created_at: at })
    .execute();
  await db
    .insertInto('console_sessions')
    .values({
      session_hash: sha256(oldCookie),
      account_id: 2,
      acting_account_id: 2,
      csrf_token: oldCsrf,
      created_at: at,
      expires_at: at + 3_600_000,
    })
    .execute();
}

for (const dialect of availableDialects()) {
  describe(`migration 032 on data of 031 [${dialect}]`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness(dialect, {}, { beforeMigrations: seedAt031 });
      // The seeded session's expiry is on the system's clock.
      h.clock.set(Date.now());
    });
    afterAll(async () => {
      await h?.close();
    });

    it('each account has one owner user with its e-mail and password', async () => {
      const users = await h.deps.store.db
        .selectFrom('users')
        .select(['account_id', 'email', 'role'])
        .orderBy('id')
        .execute();
      expect(users.map((u) => [Number(u.account_id), u.email, u.role])).toEqual([
        [1, 'first@example.com', 'owner'],
        [2, 'second@example.com', 'owner'],
      ]);
      const { answer } = await consoleSignIn(h, 'first@example.com', password);
      expect(answer.body.session).toMatchObject({ account_id: 1, email: 'first@example.com', role: 'owner' });
    });

    it("an open session is its account's owner's; an old token keeps full access", async () => {
      const as = sessionCall(h, oldCookie, oldCsrf);
      expect((await as('GET', '/console/session')).body.session).toMatchObject({
        account_id: 2,
        email: 'second@example.com',
        role: 'owner',
      });
      expect((await as('GET', '/users')).body.users).toHaveLength(1);
      const tokens = await call(h.app, 'GET', '/token', { token: oldToken });
      expect(tokens.body.tokens).toMatchObject([{ name: 'old', scope: 'full' }]);
      const created = await call(h.app, 'POST', '/token', {
        token: oldToken,
        json: { token: { name: 'new' } },
      });
      expect(created.body).toMatchObject({ status: 1, scope: 'full' });
    });
  });
}
