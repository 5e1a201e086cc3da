// The click fold: clicks are stored before their 302, then counted into their links and reported as
// CLICKER events by the fold, in click order, exactly once, whichever process folds them.
import { sql } from 'kysely';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { type ClickFold, createClickFold, createClickFolder } from '../../src/links/click-fold.ts';
import { createLinksService, type LinksService } from '../../src/links/links.service.ts';
import {
  availableDialects,
  call,
  createHarness,
  describeEachDialect,
  type Harness,
} from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

const browser =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const silent = pino({ level: 'silent' });

/** Another process on the harness database (or this one after a restart): its links service and fold. */
interface Process {
  links: LinksService;
  fold: ClickFold;
}

function thisProcess(h: Harness): Process {
  return { links: h.deps.services.links, fold: h.deps.services.clickFold };
}

function anotherProcess(h: Harness): Process {
  const links = createLinksService({
    db: h.deps.store.db,
    clock: h.clock,
    logger: silent,
    baseUrl: h.config.LINK_BASE_URL,
    codeLength: h.config.SHORT_CODE_LENGTH,
  });
  const fold = createClickFold({
    db: h.deps.store.db,
    dialect: h.deps.store.dialect,
    clock: h.clock,
    timezone: h.config.TIMEZONE,
    links,
  });
  return { links, fold };
}

/** A campaign of `recipients` through POST /send; its short codes in recipient order. */
async function campaign(h: Harness, recipients: number): Promise<{ accountId: number; codes: string[] }> {
  const account = await h.account({ credits: 1000 });
  const sent = await call(h.app, 'POST', '/send', {
    token: account.token,
    json: {
      sms: {
        message: { text: 'Offer: <-short->', pushtype: 'alert', links: ['https://shop.example/fold'] },
        recipients: {
          gsm: Array.from({ length: recipients }, (_, i) => ({
            value: `3361234${String(5000 + i).padStart(4, '0')}`,
            gsmsmsid: `fold-${i}`,
          })),
        },
      },
    },
  });
  expect(sent.body, sent.body.details).toMatchObject({ status: 1, sent: recipients });
  const rows = await h.deps.store.db
    .selectFrom('links')
    .select('code')
    .where('campaign_id', '=', Number(sent.body.ticket))
    .orderBy('message_seq')
    .execute();
  return { accountId: account.id, codes: rows.map((r) => r.code) };
}

async function click(links: LinksService, code: string): Promise<void> {
  const target = await links.resolve(code);
  const outcome = await links.recordVisit(target!, {
    head: false,
    headers: { 'user-agent': browser },
    address: '127.0.0.1',
  });
  expect(outcome).toBe('counted');
}

/** Each CLICKER event of the account as (gsmsid, clicks_on_link), in event order. */
async function clickerEvents(h: Harness, accountId: number): Promise<[string, number][]> {
  const rows = await h.deps.store.db
    .selectFrom('events')
    .select('payload')
    .where('account_id', '=', accountId)
    .where('type', '=', 'CLICKER')
    .orderBy('id')
    .execute();
  return rows.map((r) => {
    const payload = JSON.parse(r.payload) as { gsmsid: string; clicks_on_link: number };
    return [payload.gsmsid, payload.clicks_on_link];
  });
}

const counters = async (h: Harness, codes: string[]) => {
  const rows = await h.deps.store.db
    .selectFrom('links')
    .select(['code', 'clicks'])
    .where('code', 'in', codes)
    .execute();
  return codes.map((code) => rows.find((r) => r.code === code)!.clicks);
};

describeEachDialect('click fold', (h) => {
  it('counts stored clicks into their links and numbers their events in click order, across folds', async () => {
    const { links, fold } = thisProcess(h());
    const { accountId, codes } = await campaign(h(), 3);
    const order = [0, 1, 0, 2, 0, 1, 0];
    for (const i of order) await click(links, codes[i]);
    // Stored, not counted yet.
    expect(await counters(h(), codes)).toEqual([0, 0, 0]);
    expect(await clickerEvents(h(), accountId)).toEqual([]);

    // Uneven folds: the link of recipient 0 has clicks in every fold.
    expect(await fold.foldClicks(3)).toBe(3);
    expect(await fold.foldClicks(3)).toBe(3);
    expect(await fold.foldClicks(3)).toBe(1);
    expect(await fold.foldClicks(3)).toBe(0);
    expect(await counters(h(), codes)).toEqual([4, 2, 1]);
    expect(await clickerEvents(h(), accountId)).toEqual([
      ['fold-0', 1],
      ['fold-1', 1],
      ['fold-0', 2],
      ['fold-2', 1],
      ['fold-0', 3],
      ['fold-1', 2],
      ['fold-0', 4],
    ]);
  });

  it('a process that never resolved the links folds their clicks with the same CLICKER events', async () => {
    const { accountId, codes } = await campaign(h(), 1);
    await click(h().deps.services.links, codes[0]);
    await h().deps.services.clickFold.foldClicks(100);
    const before = await clickerEvents(h(), accountId);

    await click(h().deps.services.links, codes[0]);
    expect(await anotherProcess(h()).fold.foldClicks(100)).toBe(1);
    expect([...before, ['fold-0', 2]]).toEqual(await clickerEvents(h(), accountId));
    const [first, second] = await h()
      .deps.store.db.selectFrom('events')
      .select('payload')
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    const { clicks_on_link: _1, ...firstRest } = JSON.parse(first.payload);
    const { clicks_on_link: _2, ...secondRest } = JSON.parse(second.payload);
    expect(secondRest).toEqual(firstRest);
    expect(firstRest).toMatchObject({
      gsmsid: 'fold-0',
      brand: 'Google',
      model: 'Pixel 8',
      os: 'Android 14',
    });
  });

  it('clicks another process stored in between are read from the database, not skipped', async () => {
    const { accountId, codes } = await campaign(h(), 2);
    const here = thisProcess(h());
    const there = anotherProcess(h());
    await here.fold.foldClicks(100);
    await click(here.links, codes[0]);
    await click(there.links, codes[1]);
    await click(here.links, codes[0]);
    // This process stored two of the three clicks: it must not fold from its own copy alone.
    expect(await here.fold.foldClicks(100)).toBe(3);
    expect(await counters(h(), codes)).toEqual([2, 1]);
    expect(await clickerEvents(h(), accountId)).toEqual([
      ['fold-0', 1],
      ['fold-1', 1],
      ['fold-0', 2],
    ]);
  });

  it('the click folder folds shortly after clicks are stored, and folds what is left when it stops', async () => {
    const { links, fold } = anotherProcess(h());
    const { accountId, codes } = await campaign(h(), 2);
    const folder = createClickFolder({ fold, links, log: silent, options: { delayMs: 10, pollMs: 60_000 } });
    folder.start();
    try {
      await click(links, codes[0]);
      await click(links, codes[1]);
      await waitFor(async () => (await clickerEvents(h(), accountId)).length === 2, 'the folded clicks');
    } finally {
      // Stopped before its delay runs out: the click is folded by stop() itself.
      await click(links, codes[1]);
      await folder.stop();
    }
    expect(await clickerEvents(h(), accountId)).toEqual([
      ['fold-0', 1],
      ['fold-1', 1],
      ['fold-1', 2],
    ]);
    expect(await counters(h(), codes)).toEqual([1, 2]);
  });

  it('folds running side by side count every click exactly once', async () => {
    const { accountId, codes } = await campaign(h(), 2);
    for (let i = 0; i < 40; i++) await click(h().deps.services.links, codes[i % 2]);
    const folds = [thisProcess(h()), anotherProcess(h()), anotherProcess(h())].map((p) => p.fold);
    // Each keeps folding until nothing is left; on PostgreSQL they run concurrently and take turns.
    await Promise.all(
      folds.map(async (f) => {
        while ((await f.foldClicks(7)) > 0);
      }),
    );
    for (const f of folds) while ((await f.foldClicks(7)) > 0);
    expect(await counters(h(), codes)).toEqual([20, 20]);
    const events = await clickerEvents(h(), accountId);
    for (const gsmsid of ['fold-0', 'fold-1']) {
      const numbers = events.filter(([g]) => g === gsmsid).map(([, n]) => n);
      expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    }
  });
});

describe.runIf(availableDialects().includes('postgres'))('click fold [postgres]: commit order', () => {
  // PostgreSQL hands out ids when inserts run and commits them in any order: a click with a smaller id may
  // commit after one with a larger id has been folded. The fold must wait for it, not step over it.
  it('a click still being inserted when later clicks commit is folded once it commits, not skipped', async () => {
    const h = await createHarness('postgres');
    try {
      const { links, fold } = thisProcess(h);
      const { codes } = await campaign(h, 1);
      const [{ id: linkId, campaign_id, account_id }] = await h.deps.store.db
        .selectFrom('links')
        .select(['id', 'campaign_id', 'account_id'])
        .where('code', '=', codes[0])
        .execute();
      await h.deps.store.db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await conn
          .insertInto('clicks')
          .values({
            link_id: linkId,
            campaign_id,
            account_id,
            message_seq: 0,
            clicked_at: h.clock.now(),
            user_agent: browser,
            referer: null,
            ip: null,
          })
          .execute();
        // A later click commits while the first is still open.
        await click(links, codes[0]);
        expect(await fold.foldClicks(100)).toBe(0);
        await sql`commit`.execute(conn);
      });
      expect(await fold.foldClicks(100)).toBe(2);
      expect(await counters(h, codes)).toEqual([2]);
    } finally {
      await h.close();
    }
  });
});
