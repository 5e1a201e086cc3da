// One HTTP POST of a webhook delivery, through undici with the URL guard's resolver: bounded connect and
// whole-request times, redirects not followed (a 3xx is an answer like any other non-2xx), the answer's
// body read and discarded up to a cap so the connection can be reused.
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
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
}

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

const timeoutError = () => Object.assign(new Error('request timed out'), { name: 'TimeoutError' });

export function createHttpSender(options: SenderOptions) {
  const agent = new Agent({
    connect: {
      timeout: options.connectTimeoutMs,
      ...(options.guard.lookup ? { lookup: options.guard.lookup } : {}),
    },
    // Bound how long a receiver may take to send headers and body, beside the whole-request signal.
    headersTimeout: options.requestTimeoutMs,
    bodyTimeout: options.requestTimeoutMs,
  });

  const inFlight = new Set<AbortController>();

  return {
    /** POSTs one delivery. Never throws: every failure is an outcome. */
    async send(req: WebhookRequest): Promise<SendOutcome> {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      let timer: NodeJS.Timeout | undefined;
      let controller: AbortController | undefined;
      try {
        options.guard.checkLiteral(req.url);
        // One controller and timer per request (AbortSignal.timeout and .any cost several times more).
        controller = new AbortController();
        inFlight.add(controller);
        const signal = controller.signal;
        const abort = controller;
        timer = setTimeout(() => abort.abort(timeoutError()), options.requestTimeoutMs);
        const response = await request(req.url, {
          method: 'POST',
          headers: req.headers,
          body: req.body,
          dispatcher: agent,
          signal,
        });
        await response.body.dump({ limit: options.maxResponseBytes, signal }).catch(() => {});
        const retryAfter = response.headers['retry-after'];
        return {
          httpCode: response.statusCode,
          error: null,
          refused: false,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          latencyMs: latency(),
        };
      } catch (error) {
        const refusal = guardRefusal(error);
        return {
          httpCode: null,
          error: refusal ? `refused by the URL guard: ${refusal.message}` : describe(error, options),
          refused: refusal !== undefined,
          retryAfter: undefined,
          latencyMs: latency(),
        };
      } finally {
        clearTimeout(timer);
        if (controller) inFlight.delete(controller);
      }
    },

    /** Cuts every request in flight; each ends with an outcome that has no HTTP code. */
    cancelAll(): void {
      for (const controller of inFlight) controller.abort(new Error('cancelled: the dispatcher is stopping'));
    },

    close: () => agent.close(),
  };
}
