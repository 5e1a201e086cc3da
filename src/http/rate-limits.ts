// The API's request limits, counted with @fastify/rate-limit in this process's memory: requests per second per
// token (RATE_LIMIT_TOKEN_RPS, off by default) or, for an account with its own limit (`pigeon account limits
// --rps`, its or its parent's), per account with all its tokens together; requests per second per client IP
// for what carries no valid credentials (RATE_LIMIT_IP_RPS), and a brake on failed sign-ins per client IP
// (RATE_LIMIT_AUTH_FAILURES within RATE_LIMIT_AUTH_WINDOW), so guessing tokens or passwords from one address is
// slow. The brake holds the failures, not the address's good requests: a secret token (an API token, a console
// session) from a braked address is still checked, and served when valid, so one client with a stale token
// behind a shared NAT or proxy does not lock its neighbours out; a password is not checked until the brake
// ends. Each answers HTTP 429 with Retry-After and the envelope. Windows are fixed: they start at a key's first
// request and last their length, and time comes from the app's clock.
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { type Config, durationMs } from '../config.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError, Status } from '../shared/errors.ts';
import type { App } from './types.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route is behind the auth hook: it is limited per token, and per IP only when sign-in fails. */
    authenticated?: boolean;
  }
}

export interface RateLimitOptions {
  /** Requests per second per token (per account for legacy body credentials); 0 for no limit. */
  tokenRps: number;
  /** Requests per second per client IP without valid credentials; 0 for no limit. */
  ipRps: number;
  /** Failed sign-ins per client IP within `authWindowMs` before its sign-ins answer 429; 0 for no brake. */
  authFailures: number;
  authWindowMs: number;
  /** Keys (tokens, addresses) each limit remembers; beyond, the oldest window is forgotten. */
  maxKeys: number;
  /**
   * The caller's account's own requests per second (all its tokens together; 0 for no limit), or undefined when
   * it has none and `tokenRps` applies per token (wired to the limits room, from memory on most requests).
   */
  accountRps?: (auth: AuthContext) => Promise<number | undefined>;
}

export const rateLimitOptions = (
  config: Pick<
    Config,
    'RATE_LIMIT_TOKEN_RPS' | 'RATE_LIMIT_IP_RPS' | 'RATE_LIMIT_AUTH_FAILURES' | 'RATE_LIMIT_AUTH_WINDOW'
  >,
): RateLimitOptions => ({
  tokenRps: config.RATE_LIMIT_TOKEN_RPS,
  ipRps: config.RATE_LIMIT_IP_RPS,
  authFailures: config.RATE_LIMIT_AUTH_FAILURES,
  authWindowMs: durationMs(config.RATE_LIMIT_AUTH_WINDOW),
  maxKeys: 10_000,
});

type StoreCallback = (error: Error | null, result: { current: number; ttl: number }) => void;

/**
 * The plugin's store interface on the app's clock (its own store reads Date.now()), so windows are as testable
 * as the rest of Pigeon's time. One per limit; bounded to `maxKeys` windows, the oldest forgotten first.
 */
function clockedStore(clock: Clock, maxKeys: number) {
  return class ClockedStore {
    private readonly windows = new Map<string, { count: number; startedAt: number }>();

    incr(key: string, done: StoreCallback, timeWindow: number): void {
      const now = clock.now();
      let window = this.windows.get(key);
      if (!window || now >= window.startedAt + timeWindow || now < window.startedAt) {
        // Deleted and set again, so the map's insertion order stays the windows' age order.
        this.windows.delete(key);
        if (this.windows.size >= maxKeys) this.windows.delete(this.windows.keys().next().value as string);
        window = { count: 0, startedAt: now };
        this.windows.set(key, window);
      }
      window.count++;
      done(null, { current: window.count, ttl: window.startedAt + timeWindow - now });
    }

    read(key: string, done: StoreCallback, timeWindow: number): void {
      const now = clock.now();
      const window = this.windows.get(key);
      if (!window || now >= window.startedAt + timeWindow || now < window.startedAt) {
        done(null, { current: 0, ttl: 0 });
        return;
      }
      done(null, { current: window.count, ttl: window.startedAt + timeWindow - now });
    }

    child(): ClockedStore {
      return new ClockedStore();
    }
  };
}

/** The client's address as the limits count it: an IPv6 client by its /64, as one host usually holds one. */
const clientKey = (request: FastifyRequest) => normalizeIP(request.ip ?? 'unknown');

type Limiter = ReturnType<App['createRateLimit']>;

/**
 * What a sign-in checks: a `token` (an API token or a console session: a random secret found by its hash, too
 * long to guess, so a valid one is served even from a braked address) or a `password` (guessable, so a braked
 * address's passwords are refused unchecked).
 */
export type CredentialKind = 'token' | 'password';

export interface RateLimits {
  /**
   * Signs a request in through `authenticate`, within the limits: while an IP is braked for failed sign-ins,
   * refuses (429) its passwords at once and its tokens unless they are valid; counts a failure (a credential given and refused) toward that brake and any refused request
   * toward the IP's limit; and counts a signed-in request toward its token's limit. Sets `request.auth`.
   */
  authenticate(
    request: FastifyRequest,
    credentialGiven: boolean,
    authenticate: () => Promise<AuthContext>,
    kind?: CredentialKind,
  ): Promise<AuthContext>;
  /**
   * Runs a password-like check that is not a sign-in of this request (a console sign-in's code step, a
   * password change, a reset request) within the same brake: refused (429) while the IP is braked; a refusal
   * (-1) counts as a failure, and so does every call when `countEvery` (a reset request, whose answer must not
   * say whether it found anyone).
   */
  attempt<T>(
    request: FastifyRequest,
    check: () => Promise<T>,
    options?: { countEvery?: boolean },
  ): Promise<T>;
}

/**
 * Registers @fastify/rate-limit on `app` (no route hooks of its own), limits per IP the requests to routes
 * outside authentication (the docs, unknown paths: register this before the not-found handler), and answers
 * the checks of the auth hook. Routes behind that hook say so with `config.authenticated`.
 */
export function registerRateLimits(app: App, options: RateLimitOptions, clock: Clock): RateLimits {
  app.register(rateLimit, { global: false, store: clockedStore(clock, options.maxKeys) });

  // Made on first use: the plugin adds createRateLimit to the app when it loads, after this function returns.
  let made: { ip?: Limiter; token?: Limiter; account?: Limiter; brake?: Limiter } | undefined;
  // The limit of each request's account, for the account limiter's `max`.
  const accountMax = new WeakMap<FastifyRequest, number>();
  const limiters = () => {
    made ??= {
      ip:
        options.ipRps > 0
          ? app.createRateLimit({ max: options.ipRps, timeWindow: 1000, keyGenerator: clientKey })
          : undefined,
      // By token id, never the token: the keys are what this process keeps in memory.
      token:
        options.tokenRps > 0
          ? app.createRateLimit({
              max: options.tokenRps,
              timeWindow: 1000,
              keyGenerator: (request) => {
                const auth = request.auth!;
                return auth.tokenId > 0 ? `token ${auth.tokenId}` : `account ${auth.accountId}`;
              },
            })
          : undefined,
      account: options.accountRps
        ? app.createRateLimit({
            max: (request) => accountMax.get(request) ?? 0,
            timeWindow: 1000,
            keyGenerator: (request) => `limits ${request.auth!.accountId}`,
          })
        : undefined,
      brake:
        options.authFailures > 0
          ? app.createRateLimit({
              max: options.authFailures,
              timeWindow: options.authWindowMs,
              keyGenerator: clientKey,
            })
          : undefined,
    };
    return made;
  };

  async function countIp(request: FastifyRequest, ip: Limiter): Promise<void> {
    const limit = await ip(request);
    if (!limit.isAllowed && limit.isExceeded) {
      throw ApiError.tooManyRequests(
        Status.unknown,
        `more than ${limit.max} requests per second without valid credentials from ${request.ip} (RATE_LIMIT_IP_RPS); retry in ${limit.ttlInSeconds} s`,
        limit.ttlInSeconds,
      );
    }
  }

  if (options.ipRps > 0) {
    app.addHook('onRequest', async (request) => {
      if (request.routeOptions.config.authenticated) return;
      const { ip } = limiters();
      if (ip) await countIp(request, ip);
    });
  }

  /** The refusal of a braked address, or undefined. A peek: only failures count toward the brake. */
  async function brakedError(request: FastifyRequest, brake: Limiter): Promise<ApiError | undefined> {
    const failed = await brake(request, { increment: false });
    if (failed.isAllowed || failed.remaining !== 0) return undefined;
    return ApiError.tooManyRequests(
      Status.auth,
      `too many failed sign-ins from ${request.ip}: sign-ins from it are refused for ${failed.ttlInSeconds} s`,
      failed.ttlInSeconds,
    );
  }

  /** Counts a request toward its account's own limit (`rps` per second, all its tokens together). */
  async function countAccount(request: FastifyRequest, auth: AuthContext, rps: number): Promise<void> {
    accountMax.set(request, rps);
    const limit = await limiters().account!(request);
    if (!limit.isAllowed && limit.isExceeded) {
      throw ApiError.tooManyRequests(
        Status.unknown,
        `more than ${rps} requests per second for account ${auth.accountId}, all its API tokens together (its requests_per_second limit: pigeon account limits); retry in ${limit.ttlInSeconds} s`,
        limit.ttlInSeconds,
      );
    }
  }

  const isRefusal = (error: unknown) =>
    error instanceof ApiError && error.status === Status.auth && error.httpCode === 200;

  return {
    async attempt(request, check, options = {}) {
      const { brake } = limiters();
      if (!brake) return check();
      const braked = await brakedError(request, brake);
      if (braked) throw braked;
      if (options.countEvery) await brake(request);
      try {
        return await check();
      } catch (error) {
        if (!options.countEvery && isRefusal(error)) await brake(request);
        throw error;
      }
    },

    async authenticate(request, credentialGiven, authenticate, kind = 'password') {
      const { ip, token, brake } = limiters();
      // A braked address is refused before any password is checked, and before a request without credentials
      // is. A token is checked first, and the brake looked at only when the token is refused: a look on every
      // request cost each send 5 µs of the API's 250 (a profile of the send bench).
      const brakedFirst = brake !== undefined && (kind === 'password' || !credentialGiven);
      if (brakedFirst) {
        const braked = await brakedError(request, brake);
        if (braked) throw braked;
      }
      let auth: AuthContext;
      try {
        auth = await authenticate();
      } catch (error) {
        // A refusal (-1 at HTTP 200), not a 429 of the password checks' own queue.
        if (isRefusal(error)) {
          // Looked at before this refusal counts, as it was when it was looked at before the check.
          const braked = brake && !brakedFirst ? await brakedError(request, brake) : undefined;
          if (brake && credentialGiven) await brake(request);
          if (ip) await countIp(request, ip);
          // A braked address's wrong token is answered as braked (429), and prolongs nothing: the window is fixed.
          if (braked) throw braked;
        }
        throw error;
      }
      request.auth = auth;
      const accountRps = await options.accountRps?.(auth);
      if (accountRps !== undefined) {
        if (accountRps > 0) await countAccount(request, auth, accountRps);
      } else if (token) {
        const limit = await token(request);
        if (!limit.isAllowed && limit.isExceeded) {
          throw ApiError.tooManyRequests(
            Status.unknown,
            `more than ${limit.max} requests per second with API token ${auth.tokenId > 0 ? auth.tokenId : '(body credentials)'} (RATE_LIMIT_TOKEN_RPS); retry in ${limit.ttlInSeconds} s`,
            limit.ttlInSeconds,
          );
        }
      }
      return auth;
    },
  };
}
