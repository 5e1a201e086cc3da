// insertRows: on PostgreSQL the rows travel as one JSON parameter (one statement of one shape per batch); the
// values must read back exactly as the per-value parameters of SQLite's path give them: quotes, backslashes,
// non-Latin text, empty strings, nulls and epoch milliseconds; a value JSON cannot carry (NaN) is refused,
// never stored as null.
import { expect, it } from 'vitest';
import { insertRows } from '../../src/store/bulk-insert.ts';
import { describeEachDialect } from '../helpers/harness.ts';

const texts = [
  'plain',
  `quotes " and ' and \\ backslash`,
  'Ünïcödé — 你好 — 🎉',
  '',
  '{"a":1,"nested":"json as text"}',
  'line\nbreak\ttab',
];

describeEachDialect('insertRows', (h) => {
  it('writes any number of rows, in batches, each value read back as given', async () => {
    const { db } = h().deps.store;
    const campaignId = 900_000 + Math.floor(Math.random() * 1000);
    const rows = Array.from({ length: 77 }, (_, i) => [
      i + 1,
      i % 3 === 0 ? null : campaignId,
      'DLR',
      texts[i % texts.length],
      1_764_000_000_000 + i,
    ]);
    rows[5][1] = campaignId;
    await insertRows(db, 'events', ['account_id', 'campaign_id', 'type', 'payload', 'created_at'], rows, 32);
    const stored = await db
      .selectFrom('events')
      .select(['account_id', 'campaign_id', 'type', 'payload', 'created_at'])
      .where('created_at', '>=', 1_764_000_000_000)
      .where('created_at', '<', 1_764_000_000_077)
      .orderBy('created_at')
      .execute();
    expect(
      stored.map((r) => [
        Number(r.account_id),
        r.campaign_id === null ? null : Number(r.campaign_id),
        r.type,
        r.payload,
        Number(r.created_at),
      ]),
    ).toEqual(rows);
  });

  it('a lone UTF-16 surrogate (JSON lets a request carry one) is stored as replacement characters, never refused', async () => {
    const { db } = h().deps.store;
    await insertRows(
      db,
      'events',
      ['account_id', 'campaign_id', 'type', 'payload', 'created_at'],
      [[1, null, 'DLR', 'before \ud800 after', 1_764_000_100_000]],
      32,
    );
    const row = await db
      .selectFrom('events')
      .select('payload')
      .where('created_at', '=', 1_764_000_100_000)
      .executeTakeFirstOrThrow();
    // PostgreSQL keeps one U+FFFD; SQLite reads back its three bytes as three.
    expect(row.payload).toMatch(/^before \ufffd+ after$/);
  });

  it('refuses a value that is not a number, where JSON would have stored null', async () => {
    const { db } = h().deps.store;
    await expect(
      insertRows(
        db,
        'events',
        ['account_id', 'campaign_id', 'type', 'payload', 'created_at'],
        [[1, null, 'DLR', 'x', Number.NaN]],
        32,
      ),
    ).rejects.toThrow();
  });
});
