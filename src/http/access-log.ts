// The request id every API answer echoes in X-Request-Id, and the access log: one line per request when
// ACCESS_LOG=on (off by default: a line per request costs throughput on the send path).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { App } from './types.ts';

export const requestIdHeader = 'x-request-id';

/**
 * An id a proxy or client may give: letters, digits and `._:+=/-`, at most 128 characters (UUIDs, ULIDs,
 * hex ids, trace ids). Anything else is replaced, so a log line never carries a client's arbitrary text.
 */
const saneRequestId = /^[A-Za-z0-9][A-Za-z0-9._:+=/-]{0,127}$/;

/** The request's id: the incoming X-Request-Id when it is sane, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[requestIdHeader];
  return typeof given === 'string' && saneRequestId.test(given) ? given : randomUUID();
}

/** Echoes the request id on every answer, and with `accessLog` writes one line per request. */
export function registerRequestLog(app: App, options: { accessLog: boolean }): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(requestIdHeader, request.id);
    done();
  });
  if (!options.accessLog) return;
  // Never the URL: a query may carry a token (GET /send?token=…), and a path the caller's text. The route
  // pattern names the endpoint; the request's logger adds its id (reqId).
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        latencyMs: Math.round(reply.elapsedTime * 100) / 100,
        accountId: request.auth?.accountId ?? null,
      },
      'request',
    );
    done();
  });
}
