// The redirect server: the public hot path, on bare node:http because every microsecond of framework per
// request is paid tens of thousands of times a second. It stays thin: parse the path, ask the links service,
// answer. Rules (what counts as a click, how it is stored) live in the service.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { parseTrustProxy } from '../shared/trusted-proxies.ts';
import { clientAddress } from './client-ip.ts';
import type { LinksService, LinkTarget } from './links.service.ts';

export interface LinkServerDeps {
  config: Pick<Config, 'TRUST_PROXY'>;
  logger: Pick<Logger, 'error' | 'warn'>;
  services: { links: LinksService };
}

const notFoundPage = Buffer.from(
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1"><title>Link not found</title>' +
    '<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style>' +
    '</head><body><h1>Link not found</h1>' +
    '<p>This short link does not exist. Check that it was copied completely.</p></body></html>\n',
);
const homePage = Buffer.from('Pigeon link server: short links redirect from here.\n');
const unavailablePage = Buffer.from('Service temporarily unavailable, please try again.\n');
const methodNotAllowedPage = Buffer.from('Method not allowed: short links answer GET and HEAD.\n');

function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: Buffer,
  extra: string[] = [],
): void {
  res.writeHead(status, [
    'Content-Type',
    contentType,
    'Content-Length',
    String(body.length),
    'Cache-Control',
    'no-store',
    'X-Content-Type-Options',
    'nosniff',
    ...extra,
  ]);
  res.end(body);
}

function redirect(res: ServerResponse, target: LinkTarget): void {
  res.writeHead(302, ['Location', target.location, 'Cache-Control', 'no-store', 'Content-Length', '0']);
  res.end();
}

/** Builds the link server without listening: the runtime listens on LINK_HOST:LINK_PORT, tests and the bench on port 0. */
export function createLinkServer(deps: LinkServerDeps): Server {
  const { logger } = deps;
  const links = deps.services.links;
  const trustProxy = parseTrustProxy(deps.config.TRUST_PROXY);

  /** A found link: count the visit if it is a click, then redirect, never before the click is stored. */
  async function follow(req: IncomingMessage, res: ServerResponse, target: LinkTarget): Promise<void> {
    await links.recordVisit(target, {
      head: req.method === 'HEAD',
      headers: req.headers,
      address: clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustProxy),
    });
    redirect(res, target);
  }

  async function lookup(req: IncomingMessage, res: ServerResponse, code: string): Promise<void> {
    let target: LinkTarget | undefined;
    try {
      target = await links.resolve(code);
    } catch (error) {
      logger.error({ err: error }, 'link lookup failed');
      send(res, 503, 'text/plain; charset=utf-8', unavailablePage, ['Retry-After', '5']);
      return;
    }
    if (target === undefined) send(res, 404, 'text/html; charset=utf-8', notFoundPage);
    else await follow(req, res, target);
  }

  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', methodNotAllowedPage, ['Allow', 'GET, HEAD']);
      return;
    }
    // The query string is ignored; the code alphabet has no '%', so nothing is ever percent-decoded.
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path === '/') {
      send(res, 200, 'text/plain; charset=utf-8', homePage);
      return;
    }
    const code = path.slice(1);
    if (path.charCodeAt(0) !== 47 || !links.isCode(code)) {
      send(res, 404, 'text/html; charset=utf-8', notFoundPage);
      return;
    }
    const target = links.cached(code);
    return target ? follow(req, res, target) : lookup(req, res, code);
  }

  return createServer({ requestTimeout: 30_000, headersTimeout: 20_000 }, (req, res) => {
    try {
      handle(req, res)?.catch((error: unknown) => fail(res, error));
    } catch (error) {
      fail(res, error);
    }
  });

  /** Last resort for a bug: answer 500 if nothing was sent yet, and keep serving. */
  function fail(res: ServerResponse, error: unknown): void {
    logger.error({ err: error }, 'link server request failed');
    if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', unavailablePage);
    else res.destroy();
  }
}

/** Stops accepting, lets requests in flight finish (their clicks included), then closes idle keep-alives. */
export async function closeLinkServer(server: Server, links: LinksService): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A client holding a keep-alive connection open must not hold up shutdown for long.
  const force = setTimeout(() => server.closeAllConnections(), 5000);
  force.unref();
  await closed;
  clearTimeout(force);
  await links.drainClicks();
}
