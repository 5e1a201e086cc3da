// Builds the API's Fastify instance from the route plugins it is given (never listens: the runtime does,
// tests use inject). Nothing here knows a capability: each one's routes register themselves on `api`.
import Fastify, {
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Config } from '../config.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import { type Clock, systemClock } from '../shared/clock.ts';
import { Status } from '../shared/errors.ts';
import { fastifyTrustProxy, parseTrustProxy } from '../shared/trusted-proxies.ts';
import { registerRequestLog, requestIdHeader, requestIdOf } from './access-log.ts';
import { detectSyntax, parseBody, replyFormatOf, xmlToParse } from './body.ts';
import { cookieValue } from './cookies.ts';
import { errorPayload, errorReply, negotiate } from './envelope.ts';
import { parseQuery } from './query.ts';
import { type RateLimits, rateLimitOptions, registerRateLimits } from './rate-limits.ts';
import {
  bodyReceived,
  checkXmlSize,
  type RequestLimitsConfig,
  registerRequestLimits,
  serverTimeouts,
} from './request-limits.ts';
import type { App } from './types.ts';
import { xmlBodyCredentials } from './xml.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's limits, for a sign-in outside the auth hook (the console's) to count toward the same brake. */
    rateLimits: RateLimits;
    /** Every authenticated API route, as it registered (HEAD routes included), for the permission checks' tests. */
    apiRoutes: { method: string; url: string }[];
  }
}

/** Registers one capability's routes on the authenticated API scope. */
export type RoutePlugin = (api: App) => void;

/** Legacy body credentials: `sms.authentication:{username, password}`, the account's e-mail and password. */
export interface BodyCredentials {
  username: string;
  password: string;
}

/** Legacy clients' `sms.authentication` in a body without an Authorization header, if it has one. */
function bodyCredentials(body: unknown): BodyCredentials | undefined {
  const sms = (body as { sms?: unknown } | null | undefined)?.sms;
  const given = (sms as { authentication?: unknown } | null | undefined)?.authentication;
  if (given === null || typeof given !== 'object') return undefined;
  const { username, password } = given as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  return { username: text(username), password: text(password) };
}

export interface AppDeps {
  config: Pick<
    Config,
    | 'BODY_LIMIT_BYTES'
    | 'TRUST_PROXY'
    | 'RATE_LIMIT_TOKEN_RPS'
    | 'RATE_LIMIT_IP_RPS'
    | 'RATE_LIMIT_AUTH_FAILURES'
    | 'RATE_LIMIT_AUTH_WINDOW'
    | 'ACCESS_LOG'
  > &
    RequestLimitsConfig;
  /** The rate limits' time (the system's by default). */
  clock?: Clock;
  logger: FastifyBaseLogger;
  /**
   * Resolves an Authorization value (or a query token where a route allows one, or legacy body credentials)
   * to its caller; throws -1.
   */
  authenticate(credential: string | BodyCredentials | undefined, clientIp: string): Promise<AuthContext>;
  /**
   * Sessions of the web console: a request without a token but with this cookie is the session's caller.
   * `csrf` is the request's X-CSRF-Token header, which every such request must carry, whatever its method.
   */
  sessions?: {
    cookieName: string;
    authenticate(cookie: string, method: string, csrf: string | undefined): Promise<AuthContext>;
  };
  /** Registers the console (its page, assets and sign-in) outside authentication. */
  console?: (app: App) => void;
  /**
   * Refuses (throws) a signed-in caller whose rights lack what the route needs: the route's method and URL
   * pattern, as registered. Asked on every API request once its caller is known.
   */
  authorize?: (auth: AuthContext, method: string, url: string) => void;
  /** The caller's account's own requests per second, or undefined: RATE_LIMIT_TOKEN_RPS per token (rate-limits.ts). */
  accountRps?: (auth: AuthContext) => Promise<number | undefined>;
  routes: readonly RoutePlugin[];
  /** Routes outside authentication beside the API's (an invitation's acceptance): each one signs in itself. */
  publicRoutes?: readonly RoutePlugin[];
  /** Registers what describes the routes (OpenAPI, docs) outside authentication, before any route is added. */
  documentation?: (app: App) => void;
  /** Registers the operator's endpoints (/health, /ready, /metrics) and hooks, outside authentication. */
  operations?: (app: App) => void;
}

/** The caller with the client's address, which the audit log writes beside each change the request makes. */
const withClientIp = (auth: AuthContext, request: FastifyRequest): AuthContext => ({
  ...auth,
  clientIp: request.ip,
});

export function buildApp(deps: AppDeps): App {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Per-request log lines cost throughput on the send path; errors are still logged by the handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    // Only the hops the operator names (shared/trusted-proxies.ts): never the client's own X-Forwarded-For.
    trustProxy: fastifyTrustProxy(parseTrustProxy(deps.config.TRUST_PROXY)),
    return503OnClosing: true,
    // How long headers and bodies may take to arrive (request-limits.ts).
    ...serverTimeouts(deps.config),
    // X-Request-Id when it is sane, else a new one; echoed on every answer (access-log.ts).
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Errors raised before routing (a URL that does not decode, say) get the same envelope.
    frameworkErrors: (error, request, reply) => {
      const { httpCode, headers, body } = errorReply(error, request, request.log);
      (reply as FastifyReply)
        .code(httpCode)
        .headers(headers ?? {})
        // No hook runs before these errors: the request id is echoed here.
        .header(requestIdHeader, request.id)
        .send(errorPayload(request, reply as FastifyReply, body));
    },
    ajv: { customOptions: { coerceTypes: 'array', allErrors: false, removeAdditional: false } },
    // Arrays written the PHP way (`links[]=…`, `links[0]=…`) read as repeated keys (query.ts).
    routerOptions: { querystringParser: parseQuery },
  }) as unknown as App;

  app.decorateRequest('bodyFormat', undefined);
  app.decorateRequest('auth', undefined);
  registerRequestLog(app, { accessLog: deps.config.ACCESS_LOG === 'on' });
  const limits = registerRateLimits(
    app,
    { ...rateLimitOptions(deps.config), accountRps: deps.accountRps },
    deps.clock ?? systemClock,
  );
  app.decorate('rateLimits', limits);
  const apiRoutes: { method: string; url: string }[] = [];
  app.decorate('apiRoutes', apiRoutes);
  registerRequestLimits(app, deps.config);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'string' },
    async (request: FastifyRequest, payload: string | Buffer) => {
      const body = String(payload);
      const syntax = detectSyntax(body, request.headers['content-type']);
      request.bodyFormat = replyFormatOf(syntax);
      // Parsing XML costs the event loop far more than JSON: an API request not yet signed in is signed in
      // (legacy credentials found by a scan of the text), or refused, before its XML is parsed.
      if (request.routeOptions.config.authenticated && !request.auth) {
        const xml = xmlToParse(body, syntax);
        if (xml !== undefined) {
          checkXmlSize(xml, deps.config.XML_BODY_LIMIT_BYTES);
          const credential = xmlBodyCredentials(xml);
          request.auth = withClientIp(
            await limits.authenticate(request, credential !== undefined, () =>
              deps.authenticate(credential, request.ip),
            ),
            request,
          );
        }
      }
      return parseBody(body, syntax, deps.config.XML_BODY_LIMIT_BYTES);
    },
  );

  app.setErrorHandler((error, request, reply) => {
    const { httpCode, headers, body } = errorReply(error as Error, request, request.log);
    // Refused before its body arrived (a bad token, a body too large): the rest is not read, the connection goes.
    if (!bodyReceived(request)) reply.header('connection', 'close');
    // Serialized apart from the route's response schema, which describes its success only.
    return reply
      .code(httpCode)
      .headers(headers ?? {})
      .send(errorPayload(request, reply, body));
  });
  // HTTP 200 like every API error: the SDKs map only a 200's status to their typed errors.
  app.setNotFoundHandler((request, reply) => {
    return reply.code(200).send(
      errorPayload(request, reply, {
        status: Status.notFound,
        message: 'Not found',
        details: `no endpoint ${request.method} ${request.url.split('?')[0]}`,
      }),
    );
  });

  deps.documentation?.(app);
  deps.operations?.(app);
  deps.console?.(app);

  // Every API route is authenticated; the not-found handler above stays outside this scope.
  app.register(async (api: App) => {
    api.addHook('onRoute', (route) => {
      route.config = { ...route.config, authenticated: true };
      for (const method of [route.method].flat()) apiRoutes.push({ method, url: route.url });
    });
    // The caller's rights against the route's (its role, its token's scope), once the caller is known.
    const authorize = (request: FastifyRequest) => {
      if (request.auth && deps.authorize)
        deps.authorize(request.auth, request.method, request.routeOptions.url ?? request.url);
    };
    // A token (header, or query where the route takes one) is checked before the body is read: a refused
    // request costs no body, and the body limits know whose it is.
    api.addHook('onRequest', async (request) => {
      const query = request.query as Record<string, unknown> | undefined;
      const fromQuery = request.routeOptions.config.queryToken ? query?.token : undefined;
      const credential =
        request.headers.authorization ?? (typeof fromQuery === 'string' ? fromQuery : undefined);
      if (credential !== undefined) {
        request.auth = withClientIp(
          await limits.authenticate(request, true, () => deps.authenticate(credential, request.ip), 'token'),
          request,
        );
        authorize(request);
        return;
      }
      const sessions = deps.sessions;
      const cookie = sessions && cookieValue(request.headers.cookie, sessions.cookieName);
      if (cookie === undefined) return;
      const csrf = request.headers['x-csrf-token'];
      request.auth = withClientIp(
        await limits.authenticate(
          request,
          true,
          () => sessions!.authenticate(cookie, request.method, typeof csrf === 'string' ? csrf : undefined),
          'token',
        ),
        request,
      );
      authorize(request);
    });
    // Without one, only legacy credentials in the (smaller) body can sign the request in.
    api.addHook('preHandler', async (request, reply) => {
      negotiate(request, reply);
      if (request.auth) {
        // A token or session was checked in onRequest; XML body credentials, found as the body was parsed, here.
        authorize(request);
        return;
      }
      const credential = bodyCredentials(request.body);
      request.auth = withClientIp(
        await limits.authenticate(request, credential !== undefined, () =>
          deps.authenticate(credential, request.ip),
        ),
        request,
      );
      authorize(request);
    });
    for (const register of deps.routes) register(api);
  });
  // Beside the API, outside its authentication: their own rules sign them in.
  if (deps.publicRoutes) {
    app.register(async (open: App) => {
      for (const register of deps.publicRoutes ?? []) register(open);
    });
  }

  return app;
}
