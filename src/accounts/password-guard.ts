// Checks the passwords of legacy body credentials (`sms.authentication`) with the stored scrypt hash, and
// bounds what a storm of wrong passwords costs: scrypt is deliberately slow, and legacy clients send their
// password with every request.
import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { Semaphore } from '../shared/semaphore.ts';
import { hashPassword, verifyPassword } from './secrets.ts';

export interface PasswordGuardOptions {
  /** Wrong passwords for one username within `failureWindowMs` before its sign-ins are refused unchecked. */
  maxFailures: number;
  failureWindowMs: number;
  /** scrypt runs at once (each holds a libuv thread for tens of milliseconds). */
  maxConcurrent: number;
  /** Checks waiting for a turn; beyond, a sign-in answers HTTP 429 with Retry-After. */
  maxWaiting: number;
  /** Entries kept in each memory (verified credentials, failing usernames). */
  maxEntries: number;
}

export const defaultPasswordGuardOptions: PasswordGuardOptions = {
  maxFailures: 5,
  failureWindowMs: 60_000,
  maxConcurrent: 2,
  maxWaiting: 16,
  maxEntries: 10_000,
};

export type PasswordGuard = ReturnType<typeof createPasswordGuard>;

export function createPasswordGuard(deps: { clock: Clock; options?: PasswordGuardOptions }) {
  const { clock } = deps;
  const options = deps.options ?? defaultPasswordGuardOptions;
  // Credentials already verified, by a keyed hash of (stored hash, password), so a legacy client pays scrypt
  // once, not per request: a changed password (a new stored hash) is verified again. The key lives in memory
  // only, so the entries are worthless outside this process.
  const key = randomBytes(32);
  const verified = new Set<string>();
  // Failed sign-ins per username: how many, since when.
  const failures = new Map<string, { count: number; since: number }>();
  const turns = new Semaphore(options.maxConcurrent);
  let waiting = 0;
  // A hash to verify unknown usernames against, so they take as long as a wrong password.
  let decoy: Promise<string> | undefined;

  const verifiedKey = (storedHash: string, password: string) =>
    createHmac('sha256', key).update(storedHash).update('\0').update(password).digest('base64');

  function remember<T>(map: Map<string, T> | Set<string>, add: () => void): void {
    // Oldest first: a Map and a Set iterate in insertion order.
    if (map.size >= options.maxEntries) map.delete(map.keys().next().value as string);
    add();
  }

  function recordFailure(username: string, now: number): void {
    const f = failures.get(username);
    if (f && now - f.since < options.failureWindowMs) {
      f.count++;
      return;
    }
    failures.delete(username);
    remember(failures, () => failures.set(username, { count: 1, since: now }));
  }

  async function scryptTurn<T>(work: () => Promise<T>): Promise<T> {
    if (waiting >= options.maxWaiting) {
      throw ApiError.tooManyRequests(
        Status.auth,
        'too many sign-ins with a password are being checked; retry in 1 s or use an API token',
        1,
      );
    }
    waiting++;
    try {
      await turns.acquire();
    } finally {
      waiting--;
    }
    try {
      return await work();
    } finally {
      turns.release();
    }
  }

  return {
    /**
     * Whether `password` is the account's (`storedHash` undefined: no account has that username, and the
     * answer is false after the same work). Throws -1 without checking while the username has failed
     * `maxFailures` times within the window (credentials verified before still pass), and 429 while too many
     * checks wait.
     */
    async check(username: string, password: string, storedHash: string | undefined): Promise<boolean> {
      const known = storedHash === undefined ? undefined : verifiedKey(storedHash, password);
      if (known !== undefined && verified.has(known)) return true;
      const now = clock.now();
      const f = failures.get(username);
      if (f && now - f.since < options.failureWindowMs && f.count >= options.maxFailures) {
        const retryS = Math.ceil((f.since + options.failureWindowMs - now) / 1000);
        throw ApiError.auth(
          `too many wrong passwords for ${username}: sign-ins with it are refused for ${retryS} s`,
        );
      }
      decoy ??= hashPassword(randomBytes(16).toString('hex'));
      const against = storedHash ?? (await decoy);
      const ok = await scryptTurn(() => verifyPassword(password, against));
      if (ok && known !== undefined) {
        failures.delete(username);
        remember(verified, () => verified.add(known));
        return true;
      }
      recordFailure(username, now);
      return false;
    },
  };
}
