// `pigeon messages TICKET`, run as a child process on the database the server has open.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

const run = promisify(execFile);
const bin = join(import.meta.dirname, '..', '..', 'bin', 'pigeon.js');

async function pigeon(databaseUrl: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describeEachDialect('pigeon messages', (h) => {
  it('prints one JSON line per message in seq order, across pages', async () => {
    const a = await h().account({ credits: 5000 });
    // 2,500 recipients span three of the command's 1,000-message pages.
    const gsm = [...Array(2500)].map((_, n) => ({ value: `336${String(30000000 + n)}`, gsmsmsid: `g${n}` }));
    const sent = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'Hi <-short->', links: ['https://x.example'] }, recipients: { gsm } } },
    });
    expect(sent.body).toMatchObject({ status: 1, sent: 2500 });
    const r = await pigeon(h().databaseUrl, 'messages', sent.body.ticket);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2500);
    expect(lines[0]).toEqual({
      recipient: '33630000000',
      gsmsmsid: 'g0',
      text: expect.stringMatching(/^Hi http:\/\/.+\/[0-9A-Za-z]{10}$/),
      parts: 1,
      state: 'queued',
    });
    expect(lines.map((l) => l.gsmsmsid)).toEqual(gsm.map((g) => g.gsmsmsid));
    expect(new Set(lines.map((l) => l.text)).size).toBe(2500);
  });

  it('an unknown ticket is an error on stderr with exit code 1', async () => {
    const r = await pigeon(h().databaseUrl, 'messages', '987654');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/campaign "987654" not found/);
    expect(r.stdout).toBe('');
  });
});
