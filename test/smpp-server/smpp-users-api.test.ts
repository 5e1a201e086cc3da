// The account's SMPP users through the API (JSON and XML, in the envelope) and the operator's command line:
// created with a hashed password, listed without it, deleted; another account's are out of reach.
import { expect, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('SMPP users API', (h) => {
  it('creates, lists and deletes the account’s SMPP users, in JSON and in XML', async () => {
    const a = await h().account();
    const created = await call(h().app, 'POST', '/smpp/user', {
      token: a.token,
      json: { smpp_user: { system_id: 'api_a', password: 'pw12', tps: 20, max_binds: 2 } },
    });
    expect(created.body).toMatchObject({
      status: 1,
      message: 'OK',
      smpp_user: { system_id: 'api_a', account_id: String(a.id), tps: 20, max_binds: 2, allowed_ips: [] },
    });
    expect(JSON.stringify(created.body)).not.toContain('pw12');
    const xml = await call(h().app, 'POST', '/smpp/user', {
      token: a.token,
      accept: 'application/xml',
      xml: '<smpp_user><system_id>api_b</system_id><password>pw</password><allowed_ips>10.0.0.0/8</allowed_ips></smpp_user>',
    });
    expect(xml.contentType).toContain('xml');
    expect(xml.body.status).toBe('1');
    expect(xml.body.smpp_user.system_id).toBe('api_b');
    const list = await call(h().app, 'GET', '/smpp/user', { token: a.token });
    expect(list.body.smpp_users.map((u: { system_id: string }) => u.system_id)).toEqual(['api_a', 'api_b']);
    expect(list.body.smpp_users[1].allowed_ips).toEqual(['10.0.0.0/8']);
    const listXml = await call(h().app, 'GET', '/smpp/user', { token: a.token, accept: 'application/xml' });
    expect(listXml.raw).toContain('<system_id>api_a</system_id>');

    // Too long for SMPP: -7 naming the rule.
    const long = await call(h().app, 'POST', '/smpp/user', {
      token: a.token,
      json: { smpp_user: { system_id: 'api_c', password: '123456789' } },
    });
    expect(long.body).toMatchObject({ status: -7 });
    expect(long.body.details).toContain('8');

    // Another account can neither see nor delete them.
    const b = await h().account();
    expect((await call(h().app, 'GET', '/smpp/user', { token: b.token })).body.smpp_users).toEqual([]);
    expect((await call(h().app, 'DELETE', '/smpp/user/api_a', { token: b.token })).body.status).toBe(-5);
    const deleted = await call(h().app, 'DELETE', '/smpp/user/api_a', { token: a.token });
    expect(deleted.body).toMatchObject({ status: 1, deleted_smpp_user: 'api_a' });
    const after = await call(h().app, 'GET', '/smpp/user', { token: a.token });
    expect(after.body.smpp_users.map((u: { system_id: string }) => u.system_id)).toEqual(['api_b']);
  });

  // Five processes, each starting tsx: slow on a busy machine.
  it('pigeon smpp-user create prints one JSON line with system_id; list and delete', async () => {
    const a = await h().account();
    const cli = (...args: string[]) => pigeonOn(h().databaseUrl, ...args);
    const created = await cli(
      'smpp-user',
      'create',
      '--account',
      String(a.id),
      '--system-id',
      'cli_a',
      '--password',
      'pw',
      '--tps',
      '5',
      '--max-binds',
      '2',
      '--allow-ip',
      '127.0.0.1,::1',
    );
    expect(created.code).toBe(0);
    const line = JSON.parse(created.stdout.trim());
    expect(line).toMatchObject({
      system_id: 'cli_a',
      account_id: String(a.id),
      tps: 5,
      max_binds: 2,
      allowed_ips: ['127.0.0.1', '::1'],
    });
    const listed = await cli('smpp-user', 'list', '--account', String(a.id));
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).system_id),
    ).toEqual(['cli_a']);
    const deleted = await cli('smpp-user', 'delete', 'cli_a');
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: 'cli_a' });
    const wrong = await cli(
      'smpp-user',
      'create',
      '--account',
      String(a.id),
      '--system-id',
      'x',
      '--password',
      'far too long',
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('8');
  }, 120_000);
});
