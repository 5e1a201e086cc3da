// Bad input of every kind answers the envelope: never a crash, a hang or a 500.
import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect(
  'bad input',
  (h) => {
    it('malformed JSON is -6 with the parser reason', async () => {
      const a = await h().account();
      const r = await call(h().app, 'POST', '/webhook', {
        token: a.token,
        body: '{"webhook": {',
        contentType: 'application/json',
      });
      expect(r.httpCode).toBe(200);
      expect(r.body).toMatchObject({
        status: -6,
        message: 'JSON error',
        details: expect.stringMatching(/^body is not valid JSON/),
      });
    });

    it('malformed XML is -2, answered in XML', async () => {
      const a = await h().account();
      const r = await call(h().app, 'POST', '/webhook', {
        token: a.token,
        body: '<webhook><type>MO</webhook>',
        contentType: 'text/xml',
      });
      expect(r.contentType).toContain('xml');
      expect(r.body).toMatchObject({ status: '-2', message: 'XML error' });
    });

    it('malformed XML says what is wrong and where, in words; a raw <-short-> gets the CDATA or &lt; hint', async () => {
      const a = await h().account();
      const cases: [string, string][] = [
        [
          '<sms><message><text>x</text>',
          'XML is not well-formed: the body ends (line 1, column 29) before <message>, <sms> are closed',
        ],
        [
          '<sms><message><text>x</text></sms>',
          'XML is not well-formed: </sms> found where </message> was expected (line 1, column 29); <message> was opened at line 1, column 6',
        ],
        [
          '<sms><message><text>Go <-short-></text><links>https://x.example</links></message></sms>',
          'XML is not well-formed: a raw <-short-> in a text is read as a tag (line 1, column 24): write it &lt;-short-&gt; or wrap the text in <![CDATA[…]]>',
        ],
        [
          '<sms><message><text>a & b</text></message></sms>',
          'XML is not well-formed: a raw & must be written &amp; (line 1, column 23)',
        ],
      ];
      for (const [xml, details] of cases) {
        const r = await call(h().app, 'POST', '/send/simulate', {
          token: a.token,
          xml,
          accept: 'application/json',
        });
        expect(r.body).toEqual({ status: -2, message: 'XML error', details });
      }
      // Both ways the hint names are taken.
      for (const text of ['<![CDATA[Go <-short->]]>', 'Go &lt;-short-&gt;']) {
        const r = await call(h().app, 'POST', '/send/simulate', {
          token: a.token,
          xml: `<sms><message><text>${text}</text><links>https://x.example</links></message><recipients><gsm>33612345678</gsm></recipients></sms>`,
          accept: 'application/json',
        });
        expect(r.body).toMatchObject({ status: 1, sent: 1 });
      }
    });

    it('a bare number in a value array is taken as {"value": …} in JSON, as <gsm>…</gsm> is in XML', async () => {
      const a = await h().account();
      const bare = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'hi' },
            recipients: { gsm: ['33612345678', 33612345679, { value: '33612345670' }] },
          },
        },
      });
      expect(bare.body).toMatchObject({ status: 1, total: 3, sent: 3 });
      const odd = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        json: { sms: { message: { text: 'hi' }, recipients: { gsm: [true] } } },
      });
      expect(odd.body).toEqual({
        status: -7,
        message: 'Data error',
        details: 'sms.recipients.gsm.0 must be an object',
      });
    });

    it('DOCTYPE and entities are refused (no expansion, no external fetch)', async () => {
      const a = await h().account();
      const bombs = [
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><webhook><type>&lol2;</type></webhook>',
        '<!DOCTYPE webhook SYSTEM "http://127.0.0.1:1/evil.dtd"><webhook><type>MO</type></webhook>',
      ];
      for (const xml of bombs) {
        const r = await call(h().app, 'POST', '/webhook', { token: a.token, xml });
        expect(r.body).toMatchObject({
          status: '-2',
          details: 'DOCTYPE and entity declarations are not accepted',
        });
      }
    });

    it('deeply nested XML is refused', async () => {
      const a = await h().account();
      const xml = `<webhook>${'<a>'.repeat(100)}${'</a>'.repeat(100)}</webhook>`;
      const r = await call(h().app, 'POST', '/webhook', { token: a.token, xml });
      expect(r.body).toMatchObject({ status: '-2', details: expect.stringContaining('nesting') });
    });

    it('wrong types are -7 naming the field', async () => {
      const a = await h().account();
      const cases: [unknown, string][] = [
        [{ webhook: 'MO' }, 'webhook must be an object'],
        [{}, 'webhook is required'],
        [[], 'request body is missing or is not an object'],
        [{ webhook: { type: { name: 'MO' }, url: 'https://x.example' } }, 'webhook.type must be a string'],
      ];
      for (const [json, details] of cases) {
        const r = await call(h().app, 'POST', '/webhook', { token: a.token, json });
        expect(r.body).toEqual({ status: -7, message: 'Data error', details });
      }
      const none = await call(h().app, 'POST', '/webhook', { token: a.token });
      expect(none.body).toMatchObject({ status: -7, details: 'request body is missing or is not an object' });
    });

    it('a body over the limit is 413 with the envelope', async () => {
      const a = await h().account();
      const big = JSON.stringify({ webhook: { type: 'MO', url: `https://x.example/${'a'.repeat(5000)}` } });
      const r = await call(h().app, 'POST', '/webhook', {
        token: a.token,
        body: big,
        contentType: 'application/json',
      });
      expect(r.httpCode).toBe(413);
      expect(r.body).toMatchObject({ status: -7, details: 'request body exceeds the size limit' });
    });

    it('tolerates what real clients send: [] or {} on GET and DELETE, JSON content type on GET, empty form on DELETE', async () => {
      const a = await h().account();
      for (const body of ['[]', '{}']) {
        const r = await call(h().app, 'GET', '/webhook', {
          token: a.token,
          body,
          contentType: 'application/json',
        });
        expect(r.body.status).toBe(1);
      }
      const created = await call(h().app, 'POST', '/webhook', {
        token: a.token,
        json: { webhook: { type: 'MO', url: 'https://x.example/mo' } },
      });
      const r = await call(h().app, 'DELETE', `/webhook/${created.body.webhook.webhook_id}`, {
        token: a.token,
        body: '',
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(r.body.status).toBe(1);
    });

    it('sniffs the format when Content-Type is missing or wrong, and reads a form field `data`', async () => {
      const a = await h().account();
      const xml = await call(h().app, 'POST', '/token', {
        token: a.token,
        body: '<token><name>sniffed</name></token>',
        contentType: 'text/plain',
      });
      expect(xml.contentType).toContain('xml');
      expect(xml.body.status).toBe('1');
      const json = await call(h().app, 'POST', '/token', {
        token: a.token,
        body: '{"token":{"name":"raw"}}',
      });
      expect(json.body.status).toBe(1);
      const form = await call(h().app, 'POST', '/token', {
        token: a.token,
        body: `data=${encodeURIComponent('{"token":{"name":"legacy"}}')}`,
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(form.body.status).toBe(1);
      const names = (await call(h().app, 'GET', '/token', { token: a.token })).body.tokens.map(
        (t: { name: string }) => t.name,
      );
      expect(names).toEqual(['default', 'sniffed', 'raw', 'legacy']);
    });

    it("sniffs an XML or JSON body sent with a form Content-Type (curl -d's default), and a body contradicting its type", async () => {
      const a = await h().account();
      const send =
        '<sms><message><text>hi</text></message><recipients><gsm>33612345678</gsm></recipients></sms>';
      const xml = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        body: send,
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(xml.contentType).toContain('xml');
      expect(xml.body).toMatchObject({ status: '1', sent: '1' });
      const json = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        body: '{"sms":{"message":{"text":"hi"},"recipients":{"gsm":[{"value":"33612345678"}]}}}',
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(json.body).toMatchObject({ status: 1, sent: 1 });
      const xmlAsJson = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        body: send,
        contentType: 'application/json',
      });
      expect(xmlAsJson.body).toMatchObject({ status: '1', sent: '1' });
      // A real form still reads as one.
      const form = await call(h().app, 'POST', '/token', {
        token: a.token,
        body: `data=${encodeURIComponent('<token><name>in-a-form</name></token>')}`,
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(form.body.status).toBe(1);
    });

    it('Accept picks the format; without it the answer follows the request body', async () => {
      const a = await h().account();
      const xmlForJson = await call(h().app, 'GET', '/credits', { token: a.token, accept: 'text/xml' });
      expect(xmlForJson.raw).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><response>/);
      const jsonForXml = await call(h().app, 'POST', '/token', {
        token: a.token,
        xml: '<token><name>x</name></token>',
        accept: 'application/json',
      });
      expect(jsonForXml.contentType).toContain('json');
      const anything = await call(h().app, 'GET', '/credits', { token: a.token, accept: '*/*' });
      expect(anything.contentType).toContain('json');
    });

    it('odd paths and ids never crash', async () => {
      const a = await h().account();
      for (const url of [
        '/webhook/%zz',
        '/webhook/99999999999999999999',
        '/token/-1',
        '/webhook/1e3',
        `/webhook/${'9'.repeat(500)}`,
      ]) {
        const r = await call(h().app, 'GET', url, { token: a.token });
        expect([200, 400, 404, 414]).toContain(r.httpCode);
        expect(r.body?.status, url).toBeLessThan(0);
      }
    });
  },
  { BODY_LIMIT_BYTES: '4096' },
);
