import { Validator } from '@seriousme/openapi-schema-validator';
import type { RouteOptions } from 'fastify';
import { expect, it } from 'vitest';
import { buildApi } from '../../src/runtime.ts';
import { call, describeEachDialect, type Harness } from '../helpers/harness.ts';

interface Route {
  method: string;
  url: string;
  hasResponseSchema: boolean;
  /** Left out of the document on purpose: the console's HTML page and its assets. */
  hidden: boolean;
}

/** Every route the app registers, seen by an onRoute hook added before the app loads its plugins. */
async function registeredRoutes(h: Harness): Promise<Route[]> {
  const app = buildApi({ config: h.config, logger: h.deps.logger, services: h.deps.services });
  const routes: Route[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      routes.push({
        method,
        url: route.url,
        hasResponseSchema: route.schema?.response !== undefined,
        hidden: (route.schema as { hide?: boolean } | undefined)?.hide === true,
      });
    }
  });
  await app.ready();
  await app.close();
  return routes;
}

/**
 * The routes of the API itself: not the docs' own (`/docs…`, `/openapi.json`), not the console's page, not
 * Fastify's HEAD twins.
 */
const isApiRoute = (route: Route) =>
  route.method !== 'HEAD' && route.url !== '/openapi.json' && !route.url.startsWith('/docs') && !route.hidden;

/** `/list/:id` as OpenAPI writes it: `/list/{id}`. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

/** The paths of every field of an answer (`lists.id`), array positions left out, empty values too. */
function fieldPaths(value: unknown, prefix = '', into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) fieldPaths(item, prefix, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const path = prefix ? `${prefix}.${key}` : key;
      into.add(path);
      fieldPaths(child, path, into);
    }
  }
  return into;
}

describeEachDialect('OpenAPI and docs', (h) => {
  it('every API route declares a response schema and is in /openapi.json with its method', async () => {
    const routes = (await registeredRoutes(h())).filter(isApiRoute);
    expect(routes.length).toBeGreaterThan(50);
    const document = (await call(h().app, 'GET', '/openapi.json')).body;
    const documented = new Set(
      Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    const withoutSchema = routes.filter((r) => !r.hasResponseSchema).map((r) => `${r.method} ${r.url}`);
    const undocumented = routes
      .map((r) => `${r.method} ${openApiPath(r.url)}`)
      .filter((route) => !documented.has(route));
    expect(withoutSchema).toEqual([]);
    expect(undocumented).toEqual([]);
    // And nothing documented that is not served.
    expect(documented.size).toBe(new Set(routes.map((r) => `${r.method} ${r.url}`)).size);
  });

  it('/openapi.json is a valid OpenAPI 3.1 document, outside authentication, with the envelope and the status codes', async () => {
    const r = await call(h().app, 'GET', '/openapi.json');
    expect(r.httpCode).toBe(200);
    expect(r.contentType).toContain('application/json');
    const document = r.body;
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(Object.keys(document.paths).length).toBeGreaterThan(40);
    const validation = await new Validator().validate(structuredClone(document));
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);

    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.security).toEqual([{ bearer: [] }]);
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const error = document.components.schemas.Error;
    expect(error.properties.details.type).toBe('string');
    expect(error.properties.status.enum).toEqual([-1, -2, -3, -4, -5, -6, -7, -99]);
    for (const status of ['-1', '-2', '-3', '-4', '-5', '-6', '-7', '-99']) {
      expect(document.info.description).toContain(`| ${status} |`);
    }

    // One operation in full: its request fields in JSON and XML, its success fields, the error envelope.
    const send = document.paths['/send'].post;
    const jsonBody = send.requestBody.content['application/json'].schema;
    expect(jsonBody.properties.sms.properties.message.required).toEqual(['text']);
    expect(send.requestBody.content['application/xml'].schema.xml).toEqual({ name: 'sms' });
    for (const media of ['application/json', 'application/xml']) {
      const [success, failure] = send.responses['200'].content[media].schema.oneOf;
      expect(Object.keys(success.properties)).toEqual(
        expect.arrayContaining(['status', 'message', 'ticket', 'cost', 'credits', 'sent', 'not_allowed']),
      );
      expect(success.properties.ticket).toMatchObject({ type: 'string', pattern: '^[0-9]+$' });
      expect(failure).toMatchObject({ $ref: '#/components/schemas/Error' });
    }
    expect(send.responses['413'].content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
    const query = document.paths['/campaigns'].get.parameters.map((p: { name: string }) => p.name);
    expect(query).toEqual(expect.arrayContaining(['start', 'length', 'date_start', 'sort']));
  });

  it('/openapi.json describes /health, /ready, /metrics and the console session routes, outside authentication', async () => {
    // The app as `npm start` builds it, with the operations routes on the API's port.
    const app = buildApi({
      config: h().config,
      logger: h().deps.logger,
      services: h().deps.services,
      ops: h().deps.ops,
    });
    try {
      const r = await call(app, 'GET', '/openapi.json');
      const document = r.body;
      const validation = await new Validator().validate(structuredClone(document));
      expect(validation.errors ?? []).toEqual([]);
      for (const path of ['/health', '/ready', '/metrics']) {
        expect({
          path,
          tags: document.paths[path]?.get?.tags,
          security: document.paths[path]?.get?.security,
        }).toEqual({
          path,
          tags: ['operations'],
          security: [],
        });
      }
      expect(Object.keys(document.paths['/ready'].get.responses).sort()).toEqual(['200', '503']);
      expect(Object.keys(document.paths['/metrics'].get.responses['200'].content)).toEqual([
        'text/plain; version=0.0.4',
      ]);
      expect(Object.keys(document.paths['/console/session']).sort()).toEqual(['delete', 'get', 'post']);
      expect(document.paths['/console/session/account'].put.tags).toEqual(['console']);
      const session = document.paths['/console/session'].get;
      expect(session.security).toEqual([]);
      const [success] = session.responses['200'].content['application/json'].schema.oneOf;
      expect(Object.keys(success.properties.session.properties)).toEqual(
        expect.arrayContaining(['csrf_token', 'account_id', 'account', 'timezone', 'expires_at']),
      );
      // The routes still answer as before: their documents serialize nothing of their own.
      expect((await call(app, 'GET', '/health')).body).toEqual({ status: 1, message: 'OK' });
      expect((await call(app, 'GET', '/console/session')).body).toMatchObject({ status: -1 });
    } finally {
      await app.close();
    }
  });

  it('/docs answers an HTML page whose scripts and styles are all served by Pigeon itself', async () => {
    const get = (url: string) => h().app.inject({ method: 'GET', url });
    let page = await get('/docs');
    if (page.statusCode >= 300 && page.statusCode < 400) page = await get(String(page.headers.location));
    expect(page.statusCode).toBe(200);
    expect(String(page.headers['content-type'])).toContain('text/html');
    // No script, style or image from another host: the page works without the network and tells no one.
    expect(page.body).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    const assets = [...page.body.matchAll(/(?:src|href)\s*=\s*["']([^"']+)["']/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(2);
    for (const asset of assets) {
      const url = new URL(asset, 'http://pigeon.local/docs/').pathname;
      const served = await get(url);
      expect({ url, httpCode: served.statusCode }).toEqual({ url, httpCode: 200 });
      expect(served.body).not.toMatch(/^\{"status":-5/);
    }
    const initializer = await get('/docs/static/swagger-initializer.js');
    expect(initializer.statusCode).toBe(200);
    // The UI reads the document from this server, and asks no outside validator about it.
    expect(initializer.body).toContain("url: resolveUrl('./json')");
    expect(initializer.body).toContain('validatorUrl: null');
  });

  it('an error keeps its details under a route with a success schema, in JSON and in XML', async () => {
    const a = await h().account();
    const json = await call(h().app, 'POST', '/send', { token: a.token, json: { sms: { message: {} } } });
    expect(json.body).toEqual({
      status: -7,
      message: 'Data error',
      details: 'sms.recipients is required',
    });
    const xml = await call(h().app, 'POST', '/send', {
      token: a.token,
      xml: '<sms><message></message></sms>',
    });
    expect(xml.contentType).toContain('application/xml');
    expect(xml.body).toEqual({
      status: '-7',
      message: 'Data error',
      details: expect.stringContaining('is required'),
    });
    const notFound = await call(h().app, 'GET', '/list/999999999', { token: a.token });
    expect(notFound.body).toEqual({ status: -5, message: 'Resource not found', details: expect.any(String) });
  });

  it('the JSON answers (written from the schemas) carry every field of the XML ones (written from the objects)', async () => {
    const a = await h().account({ credits: 500 });
    const token = a.token;
    const list = await call(h().app, 'POST', '/list', {
      token,
      json: { list: { name: 'L', contacts: { gsm: [{ value: '33612345678', info1: 'Ann' }] } } },
    });
    await call(h().app, 'POST', '/blacklist', {
      token,
      json: { blacklist: { contacts: { gsm: [{ value: '33612345679' }] } } },
    });
    await call(h().app, 'POST', '/npai', {
      token,
      json: { npai: { contacts: { gsm: [{ value: '33612345670' }] } } },
    });
    const hook = await call(h().app, 'POST', '/webhook', {
      token,
      json: { webhook: { type: 'MO', url: 'https://example.com/hook', signature: 's' } },
    });
    const hookId = hook.body.webhook.webhook_id;
    const sent = await call(h().app, 'POST', '/send', {
      token,
      json: {
        sms: {
          message: { text: 'Hi', sender: 'Shop' },
          recipients: { gsm: [{ value: '33612345678', gsmsmsid: 'g1' }] },
        },
      },
    });
    await call(h().app, 'POST', '/token', {
      token,
      json: { token: { name: 'second', ttl: 60, allowed_ips: ['127.0.0.1'] } },
    });
    const reads: [string, string, unknown?][] = [
      ['GET', '/credits'],
      ['GET', '/account'],
      ['GET', '/sub-accounts'],
      ['GET', '/token'],
      ['GET', '/notification/balance'],
      ['GET', '/lists'],
      ['GET', `/list/${list.body.id}`],
      ['GET', '/blacklist'],
      ['GET', '/npai'],
      ['GET', '/webhook'],
      ['GET', `/webhook/${hookId}`],
      ['POST', `/webhook/${hookId}/test`],
      ['GET', `/webhook/${hookId}/deliveries`],
      ['GET', `/campaign/${sent.body.ticket}`],
      ['GET', '/campaigns'],
      ['GET', '/messages'],
      ['GET', '/messages/mo'],
      ['GET', '/retention'],
      ['GET', '/metrics/consumption'],
      ['GET', '/account/invoice'],
      ['POST', '/lookup', { lookup: { to: ['33612345678'] } }],
      [
        'POST',
        '/send/simulate',
        { sms: { message: { text: 'Hi' }, recipients: { gsm: [{ value: '33612345678' }] } } },
      ],
    ];
    for (const [method, url, json] of reads) {
      const asJson = await call(h().app, method, url, { token, json });
      const asXml = await call(h().app, method, url, { token, json, accept: 'application/xml' });
      expect({ url, status: asJson.body.status }).toEqual({ url, status: 1 });
      const missing = [...fieldPaths(asXml.body)].filter((path) => !fieldPaths(asJson.body).has(path));
      expect({ url, missing }).toEqual({ url, missing: [] });
    }
  });

  it("a token of account A gets -5 for account B's ids through the schema'd routes", async () => {
    const a = await h().account();
    const b = await h().account();
    const list = await call(h().app, 'POST', '/list', {
      token: b.token,
      json: { list: { name: 'B', contacts: { gsm: [{ value: '33612345678' }] } } },
    });
    const hook = await call(h().app, 'POST', '/webhook', {
      token: b.token,
      json: { webhook: { type: 'DLR', url: 'https://example.com/hook' } },
    });
    for (const [method, url] of [
      ['GET', `/list/${list.body.id}`],
      ['GET', `/webhook/${hook.body.webhook.webhook_id}`],
      ['GET', `/webhook/${hook.body.webhook.webhook_id}/deliveries`],
    ]) {
      const r = await call(h().app, method, url, { token: a.token });
      expect({ url, status: r.body.status, details: typeof r.body.details }).toEqual({
        url,
        status: -5,
        details: 'string',
      });
    }
  });
});
