// What one request may cost the API before it is known to be worth it: how long its headers and its body may
// take to arrive, how large its body may be (smaller for XML and for a request with no token), how many large
// bodies are read at once and how many bytes of them are held at once. Each refusal is answered with the
// envelope before the body is read (a chunked body's, as soon as it passes what it may take).
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, retryAfter, Status } from '../shared/errors.ts';
import { BodyBudget, type BudgetShare } from './body-budget.ts';
import { BodyGate } from './body-gate.ts';
import type { App } from './types.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The bytes of large bodies held now and at most (request-limits.ts), for the operator's eyes. */
    largeBodies: Pick<BodyBudget, 'limitBytes' | 'inFlightBytes' | 'peakBytes'>;
  }
}

export type RequestLimitsConfig = Pick<
  Config,
  | 'BODY_LIMIT_BYTES'
  | 'XML_BODY_LIMIT_BYTES'
  | 'UNAUTHENTICATED_BODY_LIMIT_BYTES'
  | 'LARGE_BODY_BYTES'
  | 'LARGE_BODY_CONCURRENCY'
  | 'LARGE_BODY_BUDGET_BYTES'
  | 'REQUEST_TIMEOUT_MS'
  | 'HEADERS_TIMEOUT_MS'
>;

/**
 * Fastify's options for the deadlines Node keeps itself: the headers' (answered a bare 408, as no route is
 * known yet), and, behind the body deadline below that answers with the envelope, the whole request's.
 * Node looks for expired requests every `connectionsCheckingInterval`.
 */
export function serverTimeouts(config: RequestLimitsConfig) {
  // Headers, a wait in line for a large body's permit, then the body.
  const requestTimeout = config.HEADERS_TIMEOUT_MS + 2 * config.REQUEST_TIMEOUT_MS;
  return {
    requestTimeout,
    http: {
      requestTimeout,
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(config.HEADERS_TIMEOUT_MS / 4))),
    },
  };
}

/**
 * A Content-Type Fastify can read (`type/subtype`, then parameters). It answers 415 to any other before a
 * parser runs, though API.md says a wrong type is sniffed: such a header is dropped, so the body is sniffed.
 */
const mediaType = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(;|$)/;

export const readableContentType = (value: string): boolean => mediaType.test(value);

const declaresXml = (request: FastifyRequest) =>
  (request.headers['content-type'] ?? '').toLowerCase().includes('xml');

export const tooLarge = (details: string) => new ApiError(Status.data, details, 413, 'Request too large');

const xmlTooLarge = (limit: number) =>
  tooLarge(`an XML body may be at most ${limit} bytes (XML_BODY_LIMIT_BYTES): send larger requests as JSON`);

/** Refuses an XML body the sniffing found above its limit, before it is parsed. */
export function checkXmlSize(text: string, limit: number): void {
  if (text.length > limit) throw xmlTooLarge(limit);
}

/**
 * Whether the whole body has arrived (read or not). Node marks a request complete only once its body is
 * read, so one whose declared length already sits in the buffer counts too.
 */
export function bodyReceived(request: FastifyRequest): boolean {
  if (request.raw.complete) return true;
  const length = declaredLength(request);
  return length !== undefined && request.raw.readableLength >= length;
}

/** The body's declared length: 0 without a body, undefined when it comes chunked. */
function declaredLength(request: FastifyRequest): number | undefined {
  const length = request.headers['content-length'];
  if (length !== undefined) return Number(length);
  return request.headers['transfer-encoding'] === undefined ? 0 : undefined;
}

/** What a body that does not fit in the large bodies' budget is answered (a chunked one, once it stops fitting). */
function overBudget(budgetBytes: number, size: number | undefined): ApiError {
  const which =
    size === undefined
      ? 'this chunked body went past what is left'
      : `this one (${size} bytes) does not fit now`;
  return new ApiError(
    Status.unknown,
    `the server holds at most ${budgetBytes} bytes of large request bodies at once (LARGE_BODY_BUDGET_BYTES) and ${which}; retry, or send smaller requests`,
    503,
    'Server busy',
    retryAfter(1),
  );
}

/**
 * Passes a body through, counting it: past `limitBytes`, past what `share` (a chunked body's part of the
 * budget) can take, or when `deadlineMs` passes before its end, it fails with the envelope's error, which
 * Fastify answers (closing the connection, the rest unread).
 */
class BodyGuard extends Transform {
  private received = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limitBytes: number,
    private readonly tooLargeError: () => ApiError,
    deadlineMs: number,
    timedOut: () => ApiError,
    private readonly share: BudgetShare | undefined,
    private readonly overBudgetError: () => ApiError,
  ) {
    super();
    this.timer = setTimeout(() => this.destroy(timedOut()), deadlineMs);
    this.once('close', () => clearTimeout(this.timer));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.limitBytes) done(this.tooLargeError());
    else if (this.share && !this.share.grow(chunk.length)) done(this.overBudgetError());
    else done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    clearTimeout(this.timer);
    done();
  }
}

/**
 * Waits for a permit to read a large body, at most `ms`. The permit, or the place in line, goes back however
 * the request ends (answered, failed, or dropped by its client while it waited). True once granted.
 */
async function permitWithin(gate: BodyGate, reply: FastifyReply, ms: number): Promise<boolean> {
  const ticket = gate.enter();
  let timer: NodeJS.Timeout | undefined;
  const given = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    reply.raw.once('close', () => {
      ticket.leave();
      resolve(false);
    });
    ticket.granted.then(() => resolve(true));
  });
  const granted = await given;
  clearTimeout(timer);
  if (!granted) ticket.leave();
  return granted;
}

/**
 * Registers the body limits on `app`, for every route (an unknown path reads no more than an authenticated
 * one would let it). A request is authenticated when an earlier onRequest hook has set `request.auth` from
 * its Authorization header or query token: the body of one without is read up to
 * UNAUTHENTICATED_BODY_LIMIT_BYTES only, since only legacy body credentials can still sign it in.
 */
export function registerRequestLimits(app: App, config: RequestLimitsConfig): void {
  const gate = new BodyGate(config.LARGE_BODY_CONCURRENCY);
  const budget = new BodyBudget(config.LARGE_BODY_BUDGET_BYTES);
  app.decorate('largeBodies', budget);

  app.addHook('onRequest', async (request) => {
    const type = request.headers['content-type'];
    if (type !== undefined && !readableContentType(type)) delete request.raw.headers['content-type'];
  });

  /** The smallest limit that applies to this request, and what its -7 says. */
  function limitOf(request: FastifyRequest): { bytes: number; error: () => ApiError } {
    let bytes = config.BODY_LIMIT_BYTES;
    let error = () => tooLarge('request body exceeds the size limit');
    if (!request.auth && config.UNAUTHENTICATED_BODY_LIMIT_BYTES < bytes) {
      bytes = config.UNAUTHENTICATED_BODY_LIMIT_BYTES;
      error = () =>
        tooLarge(
          `a request without an API token may carry at most ${bytes} bytes (UNAUTHENTICATED_BODY_LIMIT_BYTES): send the token in the Authorization header`,
        );
    }
    if (declaresXml(request) && config.XML_BODY_LIMIT_BYTES < bytes) {
      bytes = config.XML_BODY_LIMIT_BYTES;
      error = () => xmlTooLarge(bytes);
    }
    return { bytes, error };
  }

  const timedOut = () =>
    new ApiError(
      Status.unknown,
      `the request body did not arrive within ${config.REQUEST_TIMEOUT_MS} ms (REQUEST_TIMEOUT_MS)`,
      408,
      'Request timeout',
    );
  const busy = () =>
    new ApiError(
      Status.unknown,
      `the server is reading as many large request bodies as it reads at once (LARGE_BODY_CONCURRENCY=${config.LARGE_BODY_CONCURRENCY}) and this one waited ${config.REQUEST_TIMEOUT_MS} ms (REQUEST_TIMEOUT_MS); retry`,
      503,
      'Server busy',
      retryAfter(1),
    );

  app.addHook('preParsing', async (request, reply: FastifyReply, payload: Readable) => {
    const length = declaredLength(request);
    if (length === 0) return payload;
    // An error refused before the body is parsed answers in the declared format, as a parsed one would.
    if (declaresXml(request)) request.bodyFormat = 'xml';
    const limit = limitOf(request);
    if (length !== undefined && length > limit.bytes) throw limit.error();
    // Arrived whole with its headers (most requests): its size is known, and nothing is left to wait for.
    const complete = bodyReceived(request);
    const size = length ?? (complete ? request.raw.readableLength : undefined);
    if (size !== undefined && size > limit.bytes) throw limit.error();
    let share: BudgetShare | undefined;
    if (size === undefined || size > config.LARGE_BODY_BYTES) {
      // Its declared bytes are held from now until it is answered, its place in line included: a body that
      // does not fit is refused at once, so the line is never longer than the budget (no 30 s wait for a 503).
      share = budget.share();
      reply.raw.once('close', share.release);
      if (size !== undefined && !share.grow(size)) throw overBudget(budget.limitBytes, size);
      // Its client left before this hook ran: the close above has come and gone.
      if (request.raw.socket?.destroyed) share.release();
      if (!(await permitWithin(gate, reply, config.REQUEST_TIMEOUT_MS))) throw busy();
    }
    if (complete) return payload;
    // The body's own deadline starts when it is read: waiting in line is not its client's doing. A chunked
    // body takes its bytes from the budget as they come.
    const guard = new BodyGuard(
      limit.bytes,
      limit.error,
      config.REQUEST_TIMEOUT_MS,
      timedOut,
      size === undefined ? share : undefined,
      () => overBudget(budget.limitBytes, undefined),
    );
    payload.on('error', (error) => guard.destroy(error));
    reply.raw.once('close', () => guard.destroy());
    return payload.pipe(guard);
  });
}
