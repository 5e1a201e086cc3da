// Migration 031: on PostgreSQL the foreign keys checked on every message are gone (each check locked the
// account's or the message's row); SQLite keeps them, so every write and delete order stays checked there.
// Either way a send, its receipt and the purge of an erased number leave the ledger and the history whole.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

const hot = [
  ['campaigns', 'accounts'],
  ['credit_ledger', 'accounts'],
  ['messages', 'campaigns'],
  ['message_parts', 'messages'],
] as const;

describeEachDialect('foreign keys of the per-message tables', (h) => {
  it('are dropped on PostgreSQL only; 64 concurrent sends on one account debit it exactly', async () => {
    const { db, dialect } = h().deps.store;
    for (const [table, parent] of hot) {
      const keys =
        dialect === 'postgres'
          ? (
              await sql<{ parent: string }>`select confrelid::regclass::text as parent from pg_constraint
                where contype = 'f' and conrelid = to_regclass(${table})`.execute(db)
            ).rows.map((r) => r.parent.replace(/^.*\./, ''))
          : (
              await sql<{
                parent: string;
              }>`select "table" as parent from pragma_foreign_key_list(${table})`.execute(db)
            ).rows.map((r) => r.parent);
      expect(keys.includes(parent), `${table} → ${parent}`).toBe(dialect !== 'postgres');
    }
    const a = await h().account({ credits: 100 });
    const answers = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        call(h().app, 'POST', '/send', {
          token: a.token,
          json: {
            sms: {
              message: { text: 'Hi', pushtype: 'alert' },
              recipients: { gsm: [{ value: `3361234${String(5000 + i)}` }] },
            },
          },
        }),
      ),
    );
    expect(answers.filter((r) => r.body.status === 1)).toHaveLength(64);
    const credits = await call(h().app, 'GET', '/credits', { token: a.token });
    expect(Number(credits.body.credits)).toBe(36);
  });
});
