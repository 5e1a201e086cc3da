// A write that must land: a worker's record of what it already did (a submit, a webhook POST) cannot be
// dropped when the database fails to take it, or the work would be done again later. The write is retried with
// a bounded backoff until it lands, and meanwhile the worker asks `writable()` before doing more, so what it
// did but could not record never grows past what it already holds.

import type { Log } from './log.ts';

export interface WriteRetryOptions {
  /** The first wait after a failure, doubled after each one up to `maxMs`. */
  baseMs: number;
  maxMs: number;
  /** Told of each failed attempt (from 1), and how long writes have been failing. */
  onFailure(error: unknown, attempt: number, failingMs: number): void;
  /** Told once a write lands again after failures. */
  onRecovered(attempts: number, failingMs: number): void;
}

/**
 * Whether a failed attempt is worth a log line: the 1st, 2nd, 4th, 8th, 16th and 32nd (the first says writes
 * fail, the next ones whether it lasts), then every 32nd (about a minute apart at a 2 s ceiling).
 */
export const attemptWorthLogging = (attempt: number): boolean =>
  attempt <= 32 ? (attempt & (attempt - 1)) === 0 : attempt % 32 === 0;

export class WriteRetry {
  /** When the current run of failures began; undefined while writes land. */
  private failingSince: number | undefined;
  private failures = 0;
  private abandoned = false;
  private waiters: ((writable: boolean) => void)[] = [];
  private cancelWait: (() => void) | undefined;

  constructor(private readonly options: WriteRetryOptions) {}

  /** Whether the last write failed and is being retried. */
  get stalled(): boolean {
    return this.failingSince !== undefined;
  }

  /**
   * Resolves to true at once while writes land, else once one lands again; to false when the retry was
   * abandoned (the process is stopping) while writes were failing.
   */
  writable(): Promise<boolean> {
    if (!this.stalled) return Promise.resolve(true);
    if (this.abandoned) return Promise.resolve(false);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Runs `write` until it succeeds, waiting between attempts. Rejects with the last error only once
   * `abandon` was called: an abandoned retry tries each write once more, then gives up.
   */
  async run(write: () => Promise<void>): Promise<void> {
    for (;;) {
      try {
        await write();
        this.landed();
        return;
      } catch (error) {
        this.failingSince ??= Date.now();
        this.failures++;
        const failingMs = Date.now() - this.failingSince;
        try {
          this.options.onFailure(error, this.failures, failingMs);
        } catch {
          // A failing reporter must not stop the retry.
        }
        if (this.abandoned) throw error;
        await this.wait(
          Math.min(this.options.baseMs * 2 ** Math.min(this.failures - 1, 20), this.options.maxMs),
        );
        if (this.abandoned) throw error;
      }
    }
  }

  /** Stops waiting and retrying: the write waiting for its next attempt gives up, and so do `writable` callers. */
  abandon(): void {
    this.abandoned = true;
    this.cancelWait?.();
    if (this.stalled) this.wake(false);
  }

  private landed(): void {
    if (this.failingSince === undefined) return;
    const failingMs = Date.now() - this.failingSince;
    const attempts = this.failures;
    this.failingSince = undefined;
    this.failures = 0;
    this.options.onRecovered(attempts, failingMs);
    this.wake(true);
  }

  private wake(writable: boolean): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(writable);
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.cancelWait = () => {
        this.cancelWait = undefined;
        done();
      };
    });
  }
}

/**
 * The retry of a worker's records: 50 ms after the first failure, doubled up to 2 s, so a database that is
 * back is written to within 2 s. Failures are logged as errors (`failing`, with how many items wait), sparsely
 * (`attemptWorthLogging`); the first write that lands again as a warning (`recovered`).
 */
export function recordRetry(
  log: Log,
  messages: { failing: string; recovered: string },
  pending: () => number,
): WriteRetry {
  return new WriteRetry({
    baseMs: 50,
    maxMs: 2000,
    onFailure(error, attempt, failingMs) {
      if (attemptWorthLogging(attempt))
        log.error({ err: error, attempt, failingMs, pending: pending() }, messages.failing);
    },
    onRecovered(attempts, failingMs) {
      log.warn({ attempts, failingMs }, messages.recovered);
    },
  });
}
