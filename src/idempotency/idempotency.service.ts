// Idempotency-Key: a request retried with the key it was first sent with gets the first answer again, and
// its work is done once. The key is claimed in the database before the work starts (the primary key on
// (account_id, key) lets one request in, whatever process it reaches), the answer is written in the work's
// own transaction (so the work and its answer commit together or not at all), and a retry arriving
// meanwhile waits for that answer. A claim is a lease its runner renews: a runner that dies leaves a key
// that the next retry takes over once the lease runs out.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.ts';
import { ApiError, retryAfter, Status } from '../shared/errors.ts';
import type { Db, Executor } from '../store/db.ts';
import { idempotencyRepo, type KeyRow, type NewClaim } from './idempotency.repo.ts';
import { requestHash } from './request-hash.ts';

/** What a request asks: its route (`POST /send`) and its fields, whose canonical form is hashed. */
export interface IdempotentRequest {
  route: string;
  payload: unknown;
}

/**
 * Called by the work inside its transaction with the answer it is about to commit: stores the answer under
 * the key. Throws (so the transaction rolls back) when the claim was lost to another request meanwhile.
 */
export type RecordAnswer<T> = (tx: Executor, answer: T) => Promise<void>;

export interface IdempotencyOptions {
  /** How long a key answers its first answer again: 24 h. */
  ttlMs: number;
  /** A claim's lease; renewed every third of it while the request runs, so only a dead runner's lapses. */
  leaseMs: number;
  /** How long a retry waits for the first request before answering 409 (retry later). */
  waitMs: number;
  /** The longest pause between two reads of a key another process is running. */
  pollMaxMs: number;
}

export const defaultIdempotencyOptions: IdempotencyOptions = {
  ttlMs: 24 * 3_600_000,
  leaseMs: 10_000,
  waitMs: 30_000,
  pollMaxMs: 100,
};

export const maxKeyLength = 255;
/** Printable ASCII, space included: what a UUID, a ULID or any client's own request id is made of. */
const printableAscii = /^[\x20-\x7e]+$/;

/**
 * The refusals stored as a key's answer: they depend only on the request and the account's state when it
 * ran, and nothing was stored or charged. Anything else (-1 for an account locked meanwhile, -99, a 429,
 * a crash) releases the key, so the retry runs the request again.
 */
const storedRefusals: ReadonlySet<number> = new Set([
  Status.credits,
  Status.delay,
  Status.notFound,
  Status.data,
]);

/** The claim was taken over by another request (this one's lease ran out): its answer is the key's. */
class ClaimLost extends Error {}

type Outcome<T> = { kind: 'answer'; value: T } | { kind: 'lost' };

const shown = (key: string) => (key.length > 40 ? `${key.slice(0, 40)}…` : key);

/** Checks the header's value: one key of 1 to 255 printable ASCII characters, else -7 saying why. */
export function checkKey(raw: unknown): string {
  if (Array.isArray(raw)) throw ApiError.data('Idempotency-Key must be given once');
  if (typeof raw !== 'string' || raw === '') {
    throw ApiError.data(
      `Idempotency-Key is empty: give 1 to ${maxKeyLength} printable ASCII characters, such as a UUID`,
    );
  }
  if (raw.length > maxKeyLength) {
    throw ApiError.data(`Idempotency-Key has ${raw.length} characters; at most ${maxKeyLength} are allowed`);
  }
  if (!printableAscii.test(raw)) {
    const at = [...raw].findIndex((c) => !printableAscii.test(c));
    throw ApiError.data(
      `Idempotency-Key has a character that is not printable ASCII at position ${at + 1}; use letters, digits and punctuation, such as a UUID`,
    );
  }
  return raw;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;

export function createIdempotencyService(deps: {
  db: Db;
  clock: Clock;
  logger?: Pick<Logger, 'warn'>;
  options?: Partial<IdempotencyOptions>;
}) {
  const { db, clock } = deps;
  const options = { ...defaultIdempotencyOptions, ...deps.options };
  /** Requests of this process running under a key: a retry here is woken when one ends, not at the next poll. */
  const runningHere = new Map<string, Promise<void>>();

  function replay<T>(row: KeyRow): T {
    const answer = JSON.parse(row.response ?? '{}');
    const status = Number(row.status);
    if (status === Status.ok) return answer as T;
    throw new ApiError(status, String(answer.details ?? ''), Number(row.http_code ?? 200), answer.message);
  }

  function refuseOtherRequest(key: string, row: KeyRow, route: string): never {
    const what =
      row.route === route
        ? `another ${route} request (its fields differ)`
        : `a ${row.route} request, not ${route}`;
    throw ApiError.data(
      `Idempotency-Key "${shown(key)}" was already used in the last 24 hours for ${what}; a key names one request: give a new key for a new request`,
    );
  }

  /** Runs the work under a claim this request holds, renewing its lease, and stores or releases the key. */
  async function runClaimed<T>(
    accountId: number,
    key: string,
    claim: string,
    work: (record: RecordAnswer<T>) => Promise<T>,
  ): Promise<Outcome<T>> {
    const localKey = `${accountId}:${key}`;
    let ended!: () => void;
    runningHere.set(
      localKey,
      new Promise((resolve) => {
        ended = resolve;
      }),
    );
    const renewal = setInterval(
      () => {
        idempotencyRepo
          .renew(db, accountId, key, claim, clock.now() + options.leaseMs)
          .catch((error) => deps.logger?.warn({ err: error }, 'could not renew an Idempotency-Key lease'));
      },
      Math.max(1, Math.floor(options.leaseMs / 3)),
    );
    renewal.unref?.();
    let recorded = false;
    const record: RecordAnswer<T> = async (tx, answer) => {
      const stored = await idempotencyRepo.finish(tx, accountId, key, claim, {
        status: Status.ok,
        httpCode: 200,
        response: JSON.stringify(answer),
      });
      if (!stored) throw new ClaimLost('another request took this Idempotency-Key over');
      recorded = true;
    };
    try {
      const value = await work(record);
      // Work that committed nothing of its own (no transaction to record in) stores its answer now.
      if (!recorded) await record(db, value);
      return { kind: 'answer', value };
    } catch (error) {
      if (error instanceof ClaimLost) return { kind: 'lost' };
      if (error instanceof ApiError && error.httpCode === 200 && storedRefusals.has(error.status)) {
        const stored = await idempotencyRepo.finish(db, accountId, key, claim, {
          status: error.status,
          httpCode: error.httpCode,
          response: JSON.stringify({ status: error.status, message: error.message, details: error.details }),
        });
        if (!stored) return { kind: 'lost' };
        throw error;
      }
      // Nothing was stored and the failure may pass: the key is freed for the retry.
      await idempotencyRepo.release(db, accountId, key, claim).catch((releaseError) => {
        deps.logger?.warn(
          { err: releaseError },
          'could not release an Idempotency-Key; its lease will lapse',
        );
      });
      throw error;
    } finally {
      clearInterval(renewal);
      runningHere.delete(localKey);
      ended();
    }
  }

  return {
    /**
     * Runs `work` once per account and key: the first request with the key runs it and its answer is
     * stored (by `record`, inside the work's transaction); a later request with the same route and
     * payload within 24 h gets that answer again, one with another route or payload -7, and one arriving
     * while the first runs waits for its answer (at most `waitMs`, then HTTP 409 asking to retry).
     */
    async once<T>(
      accountId: number,
      rawKey: unknown,
      request: IdempotentRequest,
      work: (record: RecordAnswer<T>) => Promise<T>,
    ): Promise<T> {
      const key = checkKey(rawKey);
      const hash = requestHash(request.route, request.payload);
      const waitUntil = performance.now() + options.waitMs;
      const newClaim = (): NewClaim => {
        const now = clock.now();
        return {
          route: request.route,
          requestHash: hash,
          claim: randomBytes(12).toString('base64url'),
          leaseUntil: now + options.leaseMs,
          createdAt: now,
        };
      };
      for (let polls = 0; ; polls++) {
        let claimed: NewClaim | undefined = newClaim();
        if (!(await idempotencyRepo.insertClaim(db, accountId, key, claimed))) {
          claimed = undefined;
          const row = await idempotencyRepo.find(db, accountId, key);
          // Released by a failed first request between the insert and the read: try the insert again.
          if (!row) continue;
          const now = clock.now();
          if (Number(row.created_at) + options.ttlMs <= now) {
            const fresh = newClaim();
            if (await idempotencyRepo.claimExpired(db, accountId, key, Number(row.created_at), fresh)) {
              claimed = fresh;
            } else continue;
          } else {
            if (row.request_hash !== hash) refuseOtherRequest(key, row, request.route);
            if (row.state === 'done') return replay<T>(row);
            if (row.claim !== null && Number(row.lease_until ?? 0) <= now) {
              // Its runner died (or stalled past its lease): this request runs it instead.
              const fresh = newClaim();
              if (
                await idempotencyRepo.claimAbandoned(
                  db,
                  accountId,
                  key,
                  row.claim,
                  fresh.claim,
                  fresh.leaseUntil,
                )
              ) {
                claimed = fresh;
              } else continue;
            }
          }
        }
        if (claimed) {
          const outcome = await runClaimed(accountId, key, claimed.claim, work);
          if (outcome.kind === 'answer') return outcome.value;
          // Another request holds the key now: its answer will be this one's too.
          continue;
        }
        if (performance.now() >= waitUntil) {
          throw new ApiError(
            Status.data,
            `Idempotency-Key "${shown(key)}": the first request with this key is still running after ${options.waitMs / 1000} s; retry later to get its answer`,
            409,
            'Conflict',
            retryAfter(1),
          );
        }
        // Wait for the request running the key: at once when it runs in this process, else the next poll.
        const pollMs = Math.min(options.pollMaxMs, 5 * 2 ** Math.min(polls, 10));
        const here = runningHere.get(`${accountId}:${key}`);
        await (here ? Promise.race([here, pause(pollMs)]) : pause(pollMs));
      }
    },

    /** Deletes up to `limit` keys older than 24 h at `now`; returns how many went (0: none left). */
    pruneExpired(now: number, limit = 1000): Promise<number> {
      return idempotencyRepo.deleteCreatedBefore(db, now - options.ttlMs, limit);
    },
  };
}
