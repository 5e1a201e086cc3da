import { describe, expect, it } from 'vitest';
import { attemptWorthLogging, WriteRetry } from './write-retry.ts';

const quiet = { onFailure() {}, onRecovered() {} };

describe('WriteRetry', () => {
  it('retries a failing write until it lands, and holds writable() meanwhile', async () => {
    let answered: boolean | undefined;
    let asked = false;
    const retry: WriteRetry = new WriteRetry({
      baseMs: 1,
      maxMs: 4,
      onFailure() {
        // Asked once writes fail: the answer waits for one to land.
        if (asked) return;
        asked = true;
        void retry.writable().then((ok) => {
          answered = ok;
        });
      },
      onRecovered() {},
    });
    let tries = 0;
    await retry.run(async () => {
      tries++;
      expect(answered).toBeUndefined();
      if (tries < 5) throw new Error('database unavailable');
    });
    expect(tries).toBe(5);
    expect(retry.stalled).toBe(false);
    await Promise.resolve();
    expect(answered).toBe(true);
  });

  it('once abandoned, a failing write gives up with its error and writable() answers false', async () => {
    const retry = new WriteRetry({ baseMs: 10_000, maxMs: 10_000, ...quiet });
    const run = retry.run(async () => {
      throw new Error('still down');
    });
    await new Promise((resolve) => setImmediate(resolve));
    const writable = retry.writable();
    retry.abandon();
    await expect(run).rejects.toThrow('still down');
    expect(await writable).toBe(false);
  });

  it('logs the 1st, 2nd, 4th … 32nd failure, then every 32nd', () => {
    const logged = Array.from({ length: 100 }, (_, i) => i + 1).filter(attemptWorthLogging);
    expect(logged).toEqual([1, 2, 4, 8, 16, 32, 64, 96]);
  });
});
