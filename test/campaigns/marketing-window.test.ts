// Marketing sends wait for the sending window (Monday–Saturday 08:00–20:00 Paris, not on French public
// holidays, by default); alert sends go when asked. Deferred messages are kept and sent at the opening.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

/** An instant from Paris wall time in winter (UTC+1). */
const parisWinter = (y: number, m: number, d: number, hour: number, minute = 0) =>
  Date.UTC(y, m - 1, d, hour - 1, minute);

let numberSeq = 0;
const freshNumber = () => `3361${String(2000000 + ++numberSeq).padStart(7, '0')}`;

async function send(h: Harness, a: TestAccount, pushtype: string, delay?: string) {
  const message: Record<string, string> = { text: 'Soldes', pushtype };
  if (delay) message.delay = delay;
  const r = await call(h.app, 'POST', '/send', {
    token: a.token,
    json: { sms: { message, recipients: { gsm: [{ value: freshNumber() }, { value: freshNumber() }] } } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return Number(r.body.ticket);
}

async function dueTimes(h: Harness, ticket: number) {
  const campaign = await h.deps.store.db
    .selectFrom('campaigns')
    .select('due_at')
    .where('id', '=', ticket)
    .executeTakeFirstOrThrow();
  const messages = await h.deps.store.db
    .selectFrom('messages')
    .select('due_at')
    .where('campaign_id', '=', ticket)
    .execute();
  return { campaign: Number(campaign.due_at), messages: messages.map((m) => Number(m.due_at)) };
}

describeEachDialect('marketing sending window', (h) => {
  it('a marketing send on a Sunday is due Monday at 08:00; an alert is due at once', async () => {
    const a = await h().account();
    h().clock.set(parisWinter(2026, 1, 11, 12)); // Sunday
    const monday8 = parisWinter(2026, 1, 12, 8);
    expect(await dueTimes(h(), await send(h(), a, 'marketing'))).toEqual({
      campaign: monday8,
      messages: [monday8, monday8],
    });
    const now = h().clock.now();
    expect(await dueTimes(h(), await send(h(), a, 'alert'))).toEqual({ campaign: now, messages: [now, now] });
  });

  it('a marketing send at 21:00 is due the next morning, and GET /campaign shows that date', async () => {
    const a = await h().account();
    h().clock.set(parisWinter(2026, 1, 13, 21)); // Tuesday
    const ticket = await send(h(), a, 'marketing');
    const wednesday8 = parisWinter(2026, 1, 14, 8);
    expect((await dueTimes(h(), ticket)).messages).toEqual([wednesday8, wednesday8]);
    const read = await call(h().app, 'GET', `/campaign/${ticket}`, { token: a.token });
    expect(read.body.campaign[0]).toMatchObject({
      date: '2026-01-14 08:00:00',
      creation_date: '2026-01-13 21:00:00',
      status: 'Scheduled',
    });
  });

  it('inside the window a marketing send is due at once', async () => {
    const a = await h().account();
    h().clock.set(parisWinter(2026, 1, 14, 19, 59));
    const now = h().clock.now();
    expect((await dueTimes(h(), await send(h(), a, 'marketing'))).campaign).toBe(now);
  });

  it('a delay that lands outside the window is deferred; inside, it is kept; an alert keeps it either way', async () => {
    const a = await h().account();
    h().clock.set(parisWinter(2026, 1, 12, 10));
    // Saturday 17 January at 22:00 is after hours, Sunday is closed: Monday 19 at 08:00.
    const saturdayNight = '2026-01-17 22:00:00';
    expect((await dueTimes(h(), await send(h(), a, 'marketing', saturdayNight))).campaign).toBe(
      parisWinter(2026, 1, 19, 8),
    );
    expect((await dueTimes(h(), await send(h(), a, 'alert', saturdayNight))).campaign).toBe(
      parisWinter(2026, 1, 17, 22),
    );
    expect((await dueTimes(h(), await send(h(), a, 'marketing', '2026-01-16 15:30:00'))).campaign).toBe(
      parisWinter(2026, 1, 16, 15, 30),
    );
  });

  it('a public holiday is skipped: Christmas Eve evening waits for the 26th', async () => {
    const a = await h().account();
    h().clock.set(parisWinter(2026, 12, 24, 21)); // Thursday; Friday 25 is Christmas
    expect((await dueTimes(h(), await send(h(), a, 'marketing'))).campaign).toBe(
      parisWinter(2026, 12, 26, 8),
    );
  });

  it('a deferred message is not taken before the opening, and is taken at it: deferred, never dropped', async () => {
    const a = await h().account();
    const delivery = h().deps.services.delivery;
    h().clock.set(parisWinter(2027, 2, 6, 20, 30)); // Saturday evening
    await delivery.claim(10_000); // whatever earlier tests left due is out of the way
    const ticket = await send(h(), a, 'marketing');
    h().clock.set(parisWinter(2027, 2, 8, 7, 59)); // Monday 07:59
    expect((await delivery.claim(10_000)).filter((m) => m.campaign_id === ticket)).toEqual([]);
    h().clock.set(parisWinter(2027, 2, 8, 8));
    const taken = (await delivery.claim(10_000)).filter((m) => m.campaign_id === ticket);
    expect(taken).toHaveLength(2);
  });
});

describeEachDialect(
  'marketing sending window from configuration',
  (h) => {
    it('MARKETING_HOURS, MARKETING_DAYS and MARKETING_HOLIDAYS=none change the window', async () => {
      const a = await h().account();
      // Christmas 2026 is a Friday: with holidays off and a 10:00-12:00 window, 09:00 waits for 10:00.
      h().clock.set(parisWinter(2026, 12, 25, 9));
      expect((await dueTimes(h(), await send(h(), a, 'marketing'))).campaign).toBe(
        parisWinter(2026, 12, 25, 10),
      );
      // Friday at noon is closed (12:00 excluded); Saturday is not a sending day: Monday 10:00.
      h().clock.set(parisWinter(2026, 12, 25, 12));
      expect((await dueTimes(h(), await send(h(), a, 'marketing'))).campaign).toBe(
        parisWinter(2026, 12, 28, 10),
      );
    });
  },
  { MARKETING_HOURS: '10:00-12:00', MARKETING_DAYS: '1-5', MARKETING_HOLIDAYS: 'none' },
);

describe('marketing sending window configuration', () => {
  it('defaults to Monday–Saturday 08:00–20:00 with French holidays', () => {
    expect(loadConfig({})).toMatchObject({
      MARKETING_HOURS: '08:00-20:00',
      MARKETING_DAYS: '1-6',
      MARKETING_HOLIDAYS: 'FR',
    });
  });

  it('a window that cannot open stops the server at start, naming the variable', () => {
    const load = (env: Record<string, string>) => () => loadConfig(env);
    expect(load({ MARKETING_HOURS: '20:00-08:00' })).toThrow(ConfigError);
    expect(load({ MARKETING_HOURS: '20:00-08:00' })).toThrow(
      /MARKETING_HOURS "20:00-08:00" must open before/,
    );
    expect(load({ MARKETING_DAYS: '1-8' })).toThrow(/MARKETING_DAYS "1-8"/);
    expect(load({ MARKETING_HOLIDAYS: 'DE' })).toThrow(/MARKETING_HOLIDAYS/);
    expect(load({ TIMEZONE: 'Europe/Atlantis' })).toThrow(
      /TIMEZONE "Europe\/Atlantis" is not a known time zone/,
    );
  });
});
