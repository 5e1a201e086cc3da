// Data an older Pigeon stored reads back the same after the migrations that moved it: replies copied out
// of the webhook outbox into delivery's own table (009), the CLICKER context of links copied from their
// messages and contacts onto their own rows (010), and the lists a campaign used found through its messages'
// contacts (013), on SQLite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/db.ts';
import { availableDialects, call, createHarness, type Harness } from '../helpers/harness.ts';
import { migrateThrough } from '../helpers/migrate-through.ts';

// 2026-03-02 09:15:30 and 09:16:00 in Paris (UTC+1 in March, before the change to summer time).
const firstReplyAt = Date.UTC(2026, 2, 2, 8, 15, 30);
const laterReplyAt = Date.UTC(2026, 2, 2, 8, 16, 0);

/** The rows of two campaigns of one account, and their replies as events, written as migration 008 left them. */
async function seedAt008(store: Store): Promise<void> {
  await migrateThrough(store, '008-events-campaign-partial');
  const db = store.db;
  const at = Date.UTC(2026, 2, 1, 12);
  await db
    .insertInto('accounts')
    .values({ email: 'old@example.com', password_hash: 'x', credits: 100, unlimited: 0, created_at: at })
    .execute();
  await db.insertInto('lists').values({ account_id: 1, name: 'old list', created_at: at }).execute();
  await db
    .insertInto('contacts')
    .values({
      list_id: 1,
      account_id: 1,
      number: '33611112100',
      info1: 'Ann',
      info2: null,
      info3: 'c "3"',
      info4: '',
      created_at: at,
    })
    .execute();
  for (const id of [1, 2]) {
    await db
      .insertInto('campaigns')
      .values({
        account_id: 1,
        billed_account_id: 1,
        sender: 'Old',
        text: 'Hello',
        pushtype: 'alert',
        unicode: 0,
        cost: 2,
        total: 2,
        sent: 2,
        blacklisted: 0,
        duplicated: 0,
        invalid: 0,
        npai: 0,
        not_allowed: 0,
        status: 'scheduled',
        due_at: at,
        created_at: at,
      })
      .execute();
    for (const seq of [0, 1]) {
      await db
        .insertInto('messages')
        .values({
          campaign_id: id,
          seq,
          account_id: 1,
          recipient: `3361111${id}${seq}00`,
          gsmsmsid: seq === 0 ? `old-${id}` : null,
          // Campaign 2's second message went to a list contact.
          contact_id: id === 2 && seq === 1 ? 1 : null,
          text: 'Hello',
          parts: 1,
          encoding: 'gsm7',
          state: 'delivered',
          due_at: at,
          dlr_status: 3,
          updated_at: at,
        })
        .execute();
    }
  }
  // As the delivery service wrote them: the webhook body, with the campaign named beside it.
  const reply = (campaignId: number, type: string, from: string, message: string, gsmsmsid: string) => ({
    account_id: 1,
    campaign_id: campaignId,
    type,
    payload: JSON.stringify({
      date: '2026-03-02T09:15:30+01:00',
      message,
      from,
      account_id: '1',
      last_message_id: gsmsmsid,
    }),
    fanned_out: 1,
  });
  await db
    .insertInto('events')
    .values([
      { ...reply(1, 'MO', '33611111000', 'Merci <b> & "bien" reçu', 'old-1'), created_at: firstReplyAt },
      {
        account_id: 1,
        campaign_id: 1,
        type: 'DLR',
        payload: '{"status":3}',
        fanned_out: 1,
        created_at: firstReplyAt,
      },
      { ...reply(2, 'MO', '33611112000', 'Autre campagne', 'old-2'), created_at: firstReplyAt },
      { ...reply(1, 'STOP', '33611111100', 'STOP', ''), created_at: firstReplyAt },
      { ...reply(1, 'MO', '33611111100', 'Encore', ''), created_at: laterReplyAt },
      { ...reply(1, 'STOP', '33611111000', 'Arrêt', 'old-1'), created_at: laterReplyAt },
    ])
    .execute();
  // Links of messages with a gsmsmsid and with a contact, and one whose message was never stored.
  const link = (code: string, campaignId: number, seq: number) => ({
    code,
    campaign_id: campaignId,
    message_seq: seq,
    account_id: 1,
    long_url: 'https://old.example/',
    clicks: 0,
    created_at: at,
  });
  await db
    .insertInto('links')
    .values([link(oldCodes[0], 1, 0), link(oldCodes[1], 2, 1), link(oldCodes[2], 1, 5)])
    .execute();
  // More replies than the copy takes in one page.
  const many = Array.from({ length: manyReplies }, (_, i) => ({
    ...reply(2, 'MO', '33611112000', `n${i}`, 'old-2'),
    created_at: laterReplyAt,
  }));
  for (let i = 0; i < many.length; i += 500) {
    await db
      .insertInto('events')
      .values(many.slice(i, i + 500))
      .execute();
  }
}

const manyReplies = 1200;
const oldCodes = ['OldLink000', 'OldLink001', 'OldLink002'];

for (const dialect of availableDialects()) {
  describe(`migrations of stored data [${dialect}]`, () => {
    let h: Harness;
    let token: string;
    beforeAll(async () => {
      h = await createHarness(dialect, {}, { beforeMigrations: seedAt008 });
      token = (await h.deps.services.tokens.createTokenForCli(1, 'after the migration')).token;
    });
    afterAll(async () => {
      await h?.close();
    });
    const get = async (url: string) => (await call(h.app, 'GET', url, { token })).body;

    it('replies stored as outbox events before 009 read back the same through /mo, /blacklist and the stop counter', async () => {
      const noInfo = { info1: '', info2: '', info3: '', info4: '' };
      expect(await get('/campaign/1/mo')).toEqual({
        status: 1,
        message: 'OK',
        replies: [
          {
            destination: '33611111000',
            message: 'Merci <b> & "bien" reçu',
            date: '2026-03-02 09:15:30',
            ...noInfo,
          },
          { destination: '33611111100', message: 'Encore', date: '2026-03-02 09:16:00', ...noInfo },
        ],
        totalRecords: 2,
        totalDisplayRecords: 2,
      });
      expect(await get('/campaign/1/blacklist')).toEqual({
        status: 1,
        message: 'OK',
        stops: [
          { destination: '33611111100', date: '2026-03-02 09:15:30', ...noInfo },
          { destination: '33611111000', date: '2026-03-02 09:16:00', ...noInfo },
        ],
        totalRecords: 2,
        totalDisplayRecords: 2,
      });
      expect((await get('/campaign/1/mo?start=1&length=1')).replies).toEqual([
        { destination: '33611111100', message: 'Encore', date: '2026-03-02 09:16:00', ...noInfo },
      ]);
      expect((await get('/campaign/2/mo?length=2')).replies).toEqual([
        { destination: '33611112000', message: 'Autre campagne', date: '2026-03-02 09:15:30', ...noInfo },
        { destination: '33611112000', message: 'n0', date: '2026-03-02 09:16:00', ...noInfo },
      ]);
      const tail = (await get(`/campaign/2/mo?start=${manyReplies - 100}&length=1000`)).replies;
      expect(tail.map((r: { message: string }) => r.message)).toEqual(
        Array.from({ length: 101 }, (_, i) => `n${manyReplies - 101 + i}`),
      );
      expect((await get('/campaign/1')).campaign[0]).toMatchObject({ stop: 2 });
      expect((await get('/campaign/2')).campaign[0]).toMatchObject({ stop: 0 });
    });

    it('copied replies keep the gsmsmsid of the message they answered; receipts and other events are not copied', async () => {
      const rows = await h.deps.store.db
        .selectFrom('replies')
        .select(['campaign_id', 'type', 'number', 'gsmsmsid'])
        .orderBy('id')
        .limit(5)
        .execute();
      expect(rows).toEqual([
        { campaign_id: 1, type: 'MO', number: '33611111000', gsmsmsid: 'old-1' },
        { campaign_id: 2, type: 'MO', number: '33611112000', gsmsmsid: 'old-2' },
        { campaign_id: 1, type: 'STOP', number: '33611111100', gsmsmsid: null },
        { campaign_id: 1, type: 'MO', number: '33611111100', gsmsmsid: null },
        { campaign_id: 1, type: 'STOP', number: '33611111000', gsmsmsid: 'old-1' },
      ]);
    });

    it('links stored before 010 tell the CLICKER context of their message and contact; one without a message tells none', async () => {
      const links = h.deps.services.links;
      for (const code of oldCodes) {
        const target = await links.resolve(code);
        expect(target, code).toBeDefined();
        const outcome = await links.recordVisit(target!, {
          head: false,
          headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Mobile/15E148' },
          address: '127.0.0.1',
        });
        expect(outcome).toBe('counted');
      }
      expect(await h.deps.services.clickFold.foldClicks(100)).toBe(3);
      const events = await h.deps.store.db
        .selectFrom('events')
        .select(['campaign_id', 'payload'])
        .where('account_id', '=', 1)
        .where('type', '=', 'CLICKER')
        .orderBy('id')
        .execute();
      expect(
        events.map((e) => {
          const { gsmsid, info1, info2, info3, info4, short_url } = JSON.parse(e.payload);
          return { campaign: e.campaign_id, gsmsid, info1, info2, info3, info4, short_url };
        }),
      ).toEqual([
        {
          campaign: 1,
          gsmsid: 'old-1',
          info1: '',
          info2: '',
          info3: '',
          info4: '',
          short_url: `${h.config.LINK_BASE_URL}/${oldCodes[0]}`,
        },
        {
          campaign: 2,
          gsmsid: '',
          info1: 'Ann',
          info2: '',
          info3: 'c "3"',
          info4: '',
          short_url: `${h.config.LINK_BASE_URL}/${oldCodes[1]}`,
        },
      ]);
      // Every click is counted, the one on the link without a message too.
      expect((await get('/campaign/1')).campaign[0]).toMatchObject({ clicks: 2 });
      expect((await get('/campaign/2')).campaign[0]).toMatchObject({ clicks: 1 });
    });

    it('a reply after the migration follows the copied ones', async () => {
      h.clock.set(laterReplyAt + 60_000);
      await h.deps.services.replies.recordInbound({ from: '33611111000', to: 'x', text: 'Re-bonjour' });
      expect((await get('/campaign/1/mo')).replies.map((r: { message: string }) => r.message)).toEqual([
        'Merci <b> & "bien" reçu',
        'Encore',
        'Re-bonjour',
      ]);
    });

    it('a campaign sent to a list before 013 names that list, found through its contacts; a reply tells the contact', async () => {
      expect((await get('/campaign/1')).campaign[0].lists).toEqual([]);
      expect((await get('/campaign/2')).campaign[0].lists).toEqual([{ id: '1' }]);
      await h.deps.services.replies.recordInbound({ from: '33611112100', to: 'x', text: 'Ann ici' });
      const replies = (await get(`/campaign/2/mo?start=${manyReplies}`)).replies;
      expect(replies.at(-1)).toEqual({
        destination: '33611112100',
        message: 'Ann ici',
        date: expect.any(String),
        info1: 'Ann',
        info2: '',
        info3: 'c "3"',
        info4: '',
      });
    });
  });
}
