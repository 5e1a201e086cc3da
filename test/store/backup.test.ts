// `pigeon backup`: a copy of a live SQLite database, taken while the server keeps writing, opens, passes
// SQLite's integrity check, and holds every send acknowledged before the backup began. On PostgreSQL it
// refuses and points to pg_dump; it never overwrites a file.
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, createHarness, type Harness, type TestAccount } from '../helpers/harness.ts';

const recipientsPerSend = 50;

describe('pigeon backup of a live SQLite database', () => {
  let h: Harness;
  let a: TestAccount;
  beforeAll(async () => {
    h = await createHarness('sqlite');
    a = await h.account({ credits: 1_000_000 });
  });
  afterAll(async () => {
    await h?.close();
  });

  let sent = 0;
  async function send(): Promise<number> {
    const gsm = Array.from({ length: recipientsPerSend }, (_, i) => ({
      value: `336${String(sent * recipientsPerSend + i).padStart(8, '0')}`,
    }));
    sent++;
    const r = await call(h.app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: `Backup load ${sent}` }, recipients: { gsm } } },
    });
    expect(r.body.status, r.body.details).toBe(1);
    return Number(r.body.ticket);
  }

  it('taken while sends go on, it passes the integrity check and holds every send acknowledged before it began', async () => {
    for (let i = 0; i < 40; i++) await send();
    const acknowledged: number[] = [];
    let writing = true;
    const writes = (async () => {
      while (writing) acknowledged.push(await send());
    })();
    // Writes are under way when the backup starts; every ticket acknowledged by then must be in the copy.
    while (acknowledged.length < 5) await new Promise((resolve) => setImmediate(resolve));
    const before = [...acknowledged];
    const file = join(dirname(h.databaseUrl), 'backup.db');
    const result = await pigeonOn(h.databaseUrl, 'backup', file);
    const duringBackup = acknowledged.length - before.length;
    writing = false;
    await writes;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      backup: file,
      bytes: expect.any(Number),
      pages: expect.any(Number),
      integrity: 'ok',
    });
    // The server kept writing while the backup ran.
    expect(duringBackup).toBeGreaterThan(0);

    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      const count = copy.prepare('select count(*) as n from messages where campaign_id = ?');
      for (const ticket of before) {
        expect((count.get(ticket) as { n: number }).n, `campaign ${ticket}`).toBe(recipientsPerSend);
      }
      // A copy is whole campaigns: each send's messages are in it with their campaign, or neither is.
      const torn = copy
        .prepare(
          'select c.id from campaigns c left join messages m on m.campaign_id = c.id group by c.id having count(m.id) <> c.sent',
        )
        .all();
      expect(torn).toEqual([]);
    } finally {
      copy.close();
    }
  }, 60_000);

  it('never overwrites a file, and wants one in a folder that exists', async () => {
    const file = join(dirname(h.databaseUrl), 'taken.db');
    writeFileSync(file, 'mine');
    const taken = await pigeonOn(h.databaseUrl, 'backup', file);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`${file} already exists: name a new file for the backup`);
    const nowhere = join(dirname(h.databaseUrl), 'missing', 'backup.db');
    const noFolder = await pigeonOn(h.databaseUrl, 'backup', nowhere);
    expect(noFolder.code).toBe(1);
    expect(noFolder.stderr).toContain(`no folder ${dirname(nowhere)} to write ${nowhere} in`);
    const none = await pigeonOn(h.databaseUrl, 'backup');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('backup needs a FILE');
  });
});

describe.skipIf(!inject('pgUrl'))('pigeon backup on PostgreSQL', () => {
  it('refuses, pointing to pg_dump, and writes no file', async () => {
    const file = join(tmpdir(), `pigeon-backup-${process.pid}.db`);
    const r = await pigeonOn(inject('pgUrl'), 'backup', file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('DATABASE_URL is PostgreSQL: back it up with pg_dump -Fc');
    expect(existsSync(file)).toBe(false);
  });
});
