// MAX_QUEUED_MESSAGES: while that many messages are due and no delivery worker has taken them, a send is
// refused with HTTP 429, Retry-After and the envelope, charging nothing; simulations still answer; once the
// workers catch up, sends are accepted again.
import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect(
  'a send queue at its configured depth',
  (h) => {
    const send = (token: string, numbers: string[], path = '/send') =>
      call(h().app, 'POST', path, {
        token,
        json: {
          sms: {
            message: { text: 'Backlog', pushtype: 'alert' },
            recipients: { gsm: numbers.map((value) => ({ value })) },
          },
        },
      });

    it('refuses sends with 429 and Retry-After until the workers take the backlog, and charges nothing', async () => {
      const a = await h().account({ credits: 100 });
      const first = await send(a.token, ['33612000001', '33612000002', '33612000003']);
      expect(first.body.status).toBe(1);

      // The depth is read again after half a second.
      h().clock.advance(1000);
      const refused = await send(a.token, ['33612000004']);
      expect(refused.httpCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.body).toMatchObject({ status: -99, message: 'Too many requests' });
      expect(refused.body.details).toContain('MAX_QUEUED_MESSAGES');
      const credits = await call(h().app, 'GET', '/credits', { token: a.token });
      expect(credits.body.credits).toBe(97);

      const simulated = await send(a.token, ['33612000004'], '/send/simulate');
      expect(simulated.httpCode).toBe(200);
      expect(simulated.body.status).toBe(1);

      // A worker takes them: the queue has room again.
      expect(await h().deps.services.delivery.claim(10)).toHaveLength(3);
      h().clock.advance(1000);
      const accepted = await send(a.token, ['33612000004']);
      expect(accepted.body.status).toBe(1);
    });
  },
  { MAX_QUEUED_MESSAGES: '3' },
);
