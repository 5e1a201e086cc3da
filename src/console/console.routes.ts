import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookieValue, sessionCookie } from '../http/cookies.ts';
import { ok } from '../http/envelope.ts';
import type { App } from '../http/types.ts';
import { ApiError, Status } from '../shared/errors.ts';
import {
  sessionSchema,
  signInCodeSchema,
  signInSchema,
  signOutSchema,
  switchSchema,
} from './console.schemas.ts';
import { type ConsoleService, csrfHeaderName, sessionCookieName } from './console.service.ts';
import type { Asset } from './console-assets.ts';

// The page runs its own script only, talks to this origin only, and is never framed.
const pageSecurityHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

const cookieOf = (req: FastifyRequest) => cookieValue(req.headers.cookie, sessionCookieName);
const csrfOf = (req: FastifyRequest) => {
  const value = req.headers[csrfHeaderName];
  return typeof value === 'string' ? value : undefined;
};
const clientOf = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] });
const setCookie = (req: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number) =>
  reply.header(
    'set-cookie',
    sessionCookie(sessionCookieName, value, { maxAgeSeconds, secure: req.protocol === 'https', path: '/' }),
  );

/**
 * Login CSRF: another site must not sign a visitor in to the attacker's account. A browser sends a cross-site
 * form only as `text/plain`, urlencoded or multipart, so the sign-in takes JSON only (which a foreign page
 * can send only after a CORS preflight Pigeon never grants); and a browser's `Origin` and `Sec-Fetch-Site`
 * must say the page is this server's own. A client that sends neither (curl, a script) is not a browser and
 * has no visitor to trick. Refused before the body is read: HTTP 403, status -1.
 */
function checkSignInOrigin(req: FastifyRequest): void {
  const refuse = (why: string) =>
    new ApiError(Status.auth, `console sign-in refused: ${why}`, 403, 'Forbidden');
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    throw refuse(`send {"email","password"} as Content-Type: application/json${type ? `, not ${type}` : ''}`);
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw refuse(`a sign-in must come from the console's own page (Sec-Fetch-Site: ${site})`);
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  // Compared as URLs, so a default port written on one side only (`Host: localhost:80`) still matches.
  let same = false;
  try {
    const from = new URL(origin);
    same = from.host === new URL(`${from.protocol}//${req.host}`).host;
  } catch {
    same = false;
  }
  if (!same) throw refuse(`a sign-in must come from the console's own page, not from ${origin}`);
}

/**
 * The console: its sign-in and session (outside the API's token authentication, which the session cookie
 * then satisfies for every API route), and its page, which answers every /console/… path so the page's own
 * router can show it.
 */
export function consoleRoutes(
  app: App,
  console: ConsoleService,
  assets: Map<string, Asset> | undefined,
): void {
  // Declared in a plugin, loaded after the API docs' plugin, which sees only the routes declared after it.
  app.register(async (scoped: App) => declareConsoleRoutes(scoped, console, assets));
}

/** The console's routes, on the scope `consoleRoutes` gives them. */
function declareConsoleRoutes(
  app: App,
  console: ConsoleService,
  assets: Map<string, Asset> | undefined,
): void {
  app.post(
    '/console/session',
    { schema: signInSchema, onRequest: async (req) => checkSignInOrigin(req) },
    async (req, reply) => {
      // A wrong pair counts toward the same brake per client IP as a wrong token (RATE_LIMIT_AUTH_FAILURES).
      const { opened, codeNeeded } = await console.signIn(
        req.body.email,
        req.body.password,
        clientOf(req),
        (check) => app.rateLimits.attempt(req, check),
      );
      if (codeNeeded) {
        return ok({
          code_needed: true,
          pending_token: codeNeeded.pending_token,
          pending_expires_at: codeNeeded.expires_at,
        });
      }
      setCookie(req, reply, opened.cookie, opened.maxAgeSeconds);
      return ok({ session: opened.view });
    },
  );
  app.post(
    '/console/session/code',
    { schema: signInCodeSchema, onRequest: async (req) => checkSignInOrigin(req) },
    async (req, reply) => {
      // A wrong or used code counts toward the brake, as a wrong password does.
      const { cookie, maxAgeSeconds, view } = await console.signInWithCode(
        req.body.pending_token,
        req.body.code,
        clientOf(req),
        (check) => app.rateLimits.attempt(req, check),
      );
      setCookie(req, reply, cookie, maxAgeSeconds);
      return ok({ session: view });
    },
  );
  app.get('/console/session', { schema: sessionSchema }, async (req) =>
    ok({ session: await console.current(cookieOf(req)) }),
  );
  app.put('/console/session/account', { schema: switchSchema }, async (req) =>
    ok({ session: await console.switchTo(cookieOf(req), csrfOf(req), req.body.account_id, req.ip) }),
  );
  app.delete('/console/session', { schema: signOutSchema }, async (req, reply) => {
    await console.signOut(cookieOf(req), csrfOf(req), req.ip);
    setCookie(req, reply, '', 0);
    return ok({});
  });

  const page = (_req: FastifyRequest, reply: FastifyReply) => {
    const index = assets?.get('index.html');
    if (!index) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(
          'The console was not built: run `npm run build` (npm start does it), then start Pigeon again.\n',
        );
    }
    return reply
      .headers(pageSecurityHeaders)
      .header('cache-control', 'no-cache')
      .type(index.contentType)
      .send(index.body);
  };
  app.get('/console', { schema: { hide: true } }, page);
  app.get('/console/*', { schema: { hide: true } }, (req, reply) => {
    const path = (req.params as { '*': string })['*'];
    if (!path.startsWith('assets/')) return page(req, reply);
    const asset = assets?.get(path);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('no such console asset\n');
    return reply
      .headers(pageSecurityHeaders)
      .header('cache-control', 'no-cache')
      .type(asset.contentType)
      .send(asset.body);
  });
}
