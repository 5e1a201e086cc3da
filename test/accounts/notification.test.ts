import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('balance notification', (h) => {
  it('PUT stores the setting and echoes it as strings; GET returns it', async () => {
    const a = await h().account();
    const put = await call(h().app, 'PUT', '/notification/balance', {
      token: a.token,
      json: {
        notification: {
          alert_trigger: 500,
          alert_email: 1,
          alert_gsm: '0',
          email: 'ops@example.com',
          phone_number: '33612345678',
        },
      },
    });
    const expected = {
      alert_trigger: '500',
      alert_email: '1',
      alert_gsm: '0',
      email: 'ops@example.com',
      phone_number: '33612345678',
    };
    expect(put.body).toEqual({ status: 1, message: 'OK', notification: expected });
    expect(
      (await call(h().app, 'GET', '/notification/balance', { token: a.token })).body.notification,
    ).toEqual(expected);
  });

  it('XML in and out gives the same setting', async () => {
    const a = await h().account();
    const put = await call(h().app, 'PUT', '/notification/balance', {
      token: a.token,
      xml: '<notification><alert_trigger>20</alert_trigger><alert_email>0</alert_email><alert_gsm>1</alert_gsm><phone_number>33611111111</phone_number></notification>',
    });
    expect(put.raw).toContain('<notification><alert_trigger>20</alert_trigger><alert_email>0</alert_email>');
    expect(put.body.notification).toEqual({
      alert_trigger: '20',
      alert_email: '0',
      alert_gsm: '1',
      email: '',
      phone_number: '33611111111',
    });
  });

  it('a partial PUT keeps the fields it does not name', async () => {
    const a = await h().account();
    await call(h().app, 'PUT', '/notification/balance', {
      token: a.token,
      json: { notification: { alert_trigger: '10', alert_email: '1', email: 'a@example.com' } },
    });
    const put = await call(h().app, 'PUT', '/notification/balance', {
      token: a.token,
      json: { notification: { alert_trigger: '99' } },
    });
    expect(put.body.notification).toMatchObject({
      alert_trigger: '99',
      alert_email: '1',
      email: 'a@example.com',
    });
  });

  it('refuses values that could never work, naming the field', async () => {
    const a = await h().account();
    const cases: [Record<string, unknown>, string][] = [
      [{ alert_trigger: 'lots' }, 'notification.alert_trigger must be a whole number of credits'],
      [{ alert_email: '2' }, 'notification.alert_email must be "0" or "1"'],
      [{ email: 'not-an-address' }, 'notification.email "not-an-address" is not a valid address'],
      [{ phone_number: '+33 6' }, 'notification.phone_number must be digits with the country code first'],
      [{ alert_email: '1' }, 'notification.email is required when alert_email is "1"'],
      [{ alert_gsm: '1' }, 'notification.phone_number is required when alert_gsm is "1"'],
    ];
    for (const [notification, details] of cases) {
      const r = await call(h().app, 'PUT', '/notification/balance', {
        token: a.token,
        json: { notification },
      });
      expect(r.body).toEqual({ status: -7, message: 'Data error', details });
    }
    const missing = await call(h().app, 'PUT', '/notification/balance', { token: a.token, json: {} });
    expect(missing.body).toMatchObject({ status: -7, details: 'notification is required' });
  });
});
