// One HTTP POST of a webhook delivery, through undici's dispatcher with the URL guard's resolver: bounded
// connect and whole-request times, redirects not followed (a 3xx is an answer like any other non-2xx), the
// answer's body read and discarded up to a cap so the connection can be reused.
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { type UrlGuard, UrlGuardError } from './url-guard.ts';

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface SendOutcome {
  /** The HTTP status of the answer; null when none came. */
  httpCode: number | null;
  /** Why no answer came, or null. */
  error: string | null;
  /** The guard refused the target: nothing was sent. */
  refused: boolean;
  retryAfter: string | undefined;
  latencyMs: number;
  /** The first `answerExcerptBytes` of the answer's body, for the attempt log; null when no answer came. */
  answerExcerpt: string | null;
}

/** How much of an answer's body the attempt log keeps: enough to read a receiver's error message. */
export const answerExcerptBytes = 2048;

export interface SenderOptions {
  guard: UrlGuard;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** Bytes of an answer's body read before the connection is dropped instead. */
  maxResponseBytes: number;
}

export type HttpSender = ReturnType<typeof createHttpSender>;

/** The guard's refusal when it is somewhere in an error's cause chain. */
function guardRefusal(error: unknown): UrlGuardError | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof UrlGuardError || (e as { code?: string }).code === 'ERR_URL_GUARD')
      return e as UrlGuardError;
  }
  return undefined;
}

function describe(error: unknown, options: SenderOptions): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${options.requestTimeoutMs} ms`;
  const code = e.code ?? e.cause?.code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `could not connect within ${options.connectTimeoutMs} ms`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  const text = e.message ?? String(error);
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}

/** The outcome of a request that got no answer. */
function failure(error: unknown, options: SenderOptions, latencyMs: number): SendOutcome {
  const refusal = guardRefusal(error);
  return {
    httpCode: null,
    error: refusal ? `refused by the URL guard: ${refusal.message}` : describe(error, options),
    refused: refusal !== undefined,
    retryAfter: undefined,
    latencyMs,
    answerExcerpt: null,
  };
}

const timeoutError = () => Object.assign(new Error('request timed out'), { name: 'TimeoutError' });

type Settle = (outcome: SendOutcome) => void;

/** One request in flight: its deadline, and how to cut it once undici has handed over its controller. */
interface InFlight {
  deadline: number;
  controller: { abort(reason: Error): void } | undefined;
  cut: Error | undefined;
  fail(error: Error): void;
}

/** Where a URL's requests go, parsed once per URL: deliveries of one webhook all share it. */
const targets = new Map<string, { origin: string; path: string }>();

function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (!target) {
    if (targets.size >= 10_000) targets.clear();
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    targets.set(url, target);
  }
  return target;
}

export function createHttpSender(options: SenderOptions) {
  const agent = new Agent({
    connect: {
      timeout: options.connectTimeoutMs,
      ...(options.guard.lookup ? { lookup: options.guard.lookup } : {}),
    },
    // Bound how long a receiver may take to send headers and body, beside the whole-request deadline.
    headersTimeout: options.requestTimeoutMs,
    bodyTimeout: options.requestTimeoutMs,
  });

  // The whole-request deadline is kept by one sweep over the requests in flight rather than a timer and an
  // AbortController each: at thousands of deliveries a second those cost as much as the request itself.
  const inFlight = new Set<InFlight>();
  const sweepEveryMs = Math.min(250, Math.max(10, Math.floor(options.requestTimeoutMs / 10)));
  let sweeper: NodeJS.Timeout | undefined;
  const sweep = () => {
    const now = performance.now();
    for (const request of inFlight) if (now >= request.deadline) request.fail(timeoutError());
    if (inFlight.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  function post(req: WebhookRequest, started: number, settle: Settle): void {
    const latency = () => Math.round(performance.now() - started);
    const { origin, path } = targetOf(req.url);
    let statusCode: number | null = null;
    let retryAfter: string | undefined;
    let bodyBytes = 0;
    const excerpt: Buffer[] = [];
    let excerptBytes = 0;
    let tooLarge = false;
    let done = false;
    const finish = (outcome: SendOutcome) => {
      if (done) return;
      done = true;
      inFlight.delete(entry);
      settle(outcome);
    };
    const answered = () =>
      finish({
        httpCode: statusCode,
        error: null,
        refused: false,
        retryAfter,
        latencyMs: latency(),
        // A character cut at the end of the excerpt decodes as U+FFFD.
        answerExcerpt: excerptBytes === 0 ? '' : Buffer.concat(excerpt).toString('utf8'),
      });
    const failed = (error: unknown) => finish(failure(error, options, latency()));
    const entry: InFlight = {
      deadline: started + options.requestTimeoutMs,
      controller: undefined,
      cut: undefined,
      fail(error) {
        entry.cut ??= error;
        if (entry.controller) entry.controller.abort(error);
        else failed(error);
      },
    };
    inFlight.add(entry);
    sweeper ??= setInterval(sweep, sweepEveryMs).unref();
    agent.dispatch(
      { origin, path, method: 'POST', headers: req.headers, body: req.body },
      {
        onRequestStart(controller) {
          entry.controller = controller;
          if (entry.cut) controller.abort(entry.cut);
        },
        onResponseStart(_controller, status, headers) {
          statusCode = status;
          const value = headers['retry-after'];
          retryAfter = Array.isArray(value) ? value[0] : value;
        },
        onResponseData(controller, chunk) {
          bodyBytes += chunk.length;
          if (excerptBytes < answerExcerptBytes) {
            // A copy: the parser may reuse the memory a chunk points into.
            const part = Buffer.from(chunk.subarray(0, answerExcerptBytes - excerptBytes));
            excerpt.push(part);
            excerptBytes += part.length;
          }
          // Past the cap the answer is not read further: the connection is dropped, the status stands.
          if (bodyBytes > options.maxResponseBytes && !tooLarge) {
            tooLarge = true;
            controller.abort(new Error('answer larger than the cap'));
          }
        },
        onResponseEnd: answered,
        onResponseError(_controller, error) {
          if (tooLarge && statusCode !== null) answered();
          else failed(entry.cut ?? error);
        },
      },
    );
  }

  return {
    /** POSTs one delivery. Never throws: every failure is an outcome. */
    send(req: WebhookRequest): Promise<SendOutcome> {
      const started = performance.now();
      return new Promise<SendOutcome>((resolve) => {
        try {
          options.guard.checkLiteral(req.url);
          post(req, started, resolve);
        } catch (error) {
          resolve(failure(error, options, Math.round(performance.now() - started)));
        }
      });
    },

    /** Cuts every request in flight; each ends with an outcome that has no HTTP code. */
    cancelAll(): void {
      for (const request of inFlight) request.fail(new Error('cancelled: the dispatcher is stopping'));
    },

    close: () => {
      clearInterval(sweeper);
      sweeper = undefined;
      return agent.close();
    },
  };
}
