// The operator's price commands, run as `pigeon prices …` processes beside a running API on the same database:
// set (from a CSV file), show and clear, for an account or the instance; a running server charges a new list
// once the second its price tables are kept in memory has passed.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

/** Each command is a process of its own: several seconds each on a loaded two-core machine. */
const manyCallsMs = 120_000;

describeEachDialect('prices commands', (h) => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-prices-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const pigeon = async (...args: string[]) => {
    const r = await pigeonOn(h().databaseUrl, ...args);
    return { ...r, json: r.stdout === '' ? undefined : JSON.parse(r.stdout) };
  };
  const sendCost = async (token: string) =>
    (
      await call(h().app, 'POST', '/send/simulate', {
        token,
        json: { sms: { message: { text: 'Hi' }, recipients: { gsm: [{ value: '33656123456' }] } } },
      })
    ).body.cost;

  it(
    'set, show and clear an account list; the running server charges it within a second; errors name the line',
    async () => {
      const a = await h().account();
      const sub = await h().account({ parentId: a.id });
      expect(await sendCost(a.token)).toBe(1);

      const set = await pigeon(
        'prices',
        'set',
        '--account',
        String(a.id),
        file('a.csv', 'country_or_prefix,credits\nFR,4\n3367,6\n'),
      );
      expect(set.code, set.stderr).toBe(0);
      expect(set.json).toMatchObject({
        account_id: String(a.id),
        own: [
          { destination: '3367', credits: 6 },
          { destination: 'FR', credits: 4 },
        ],
        default: 1,
      });
      h().clock.advance(1_000);
      expect(await sendCost(a.token)).toBe(4);
      expect(await sendCost(sub.token)).toBe(4);

      const shown = await pigeon('prices', 'show', '--account', String(sub.id));
      expect(shown.json).toMatchObject({
        account_id: String(sub.id),
        own: [],
        inherited_from: [String(a.id)],
        effective: [
          { destination: 'FR', credits: 4 },
          { destination: '3367', credits: 6 },
        ],
      });

      const bad = await pigeon('prices', 'set', '--account', String(a.id), file('bad.csv', 'FR,4\nZZZ,1\n'));
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('line 2: "ZZZ" is neither an ISO 3166-1 alpha-2 country');
      const missing = await pigeon('prices', 'set', '--account', '999999', file('c.csv', 'FR,2\n'));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('account 999999 does not exist');

      const cleared = await pigeon('prices', 'clear', '--account', String(a.id));
      expect(cleared.json).toEqual({ account_id: String(a.id), removed: 2 });
      h().clock.advance(1_000);
      expect(await sendCost(a.token)).toBe(1);

      const instance = await pigeon('prices', 'set', file('i.csv', '*,2\n'));
      expect(instance.json).toMatchObject({
        account_id: null,
        own: [{ destination: '*', credits: 2 }],
        default: 2,
      });
      h().clock.advance(1_000);
      expect(await sendCost(sub.token)).toBe(2);
      expect((await pigeon('prices', 'clear')).json).toEqual({ account_id: null, removed: 1 });
    },
    manyCallsMs,
  );
});
