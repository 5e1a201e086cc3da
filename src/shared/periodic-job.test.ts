import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Log } from './log.ts';
import { createPeriodicJob, maxTimerMs, minEveryMs, rest } from './periodic-job.ts';

const recorder = () => {
  const errors: string[] = [];
  const log: Log = { info() {}, warn() {}, error: (_obj, msg) => errors.push(msg) };
  return { log, errors };
};

describe('a periodic job runs one pass at a time, within its bounds', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a pass at start, the next one `everyMs` after it ends; a failed pass is logged and the next runs', async () => {
    const { log, errors } = recorder();
    let passes = 0;
    const job = createPeriodicJob({
      name: 'test',
      everyMs: 60_000,
      log,
      async pass() {
        passes++;
        if (passes === 1) throw new Error('database gone');
      },
    });
    job.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1);
    expect(errors).toEqual(['test pass failed; the next one will try again']);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(2);
    await job.stop();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(passes).toBe(2);
  });

  it('a period of 0 does not run passes back to back: they are `minEveryMs` apart', async () => {
    let passes = 0;
    const job = createPeriodicJob({
      name: 'test',
      everyMs: 0,
      log: recorder().log,
      pass: async () => void passes++,
    });
    job.start();
    await vi.advanceTimersByTimeAsync(minEveryMs - 1);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(2);
    await job.stop();
  });

  it('a period longer than a timer holds waits the longest a timer holds, not 1 ms', async () => {
    let passes = 0;
    const job = createPeriodicJob({
      name: 'test',
      everyMs: 30 * 86_400_000,
      log: recorder().log,
      pass: async () => void passes++,
    });
    job.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(maxTimerMs - 1);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(2);
    await job.stop();
  });

  it('stop cuts the rest of the pass under way short and waits for the pass to finish', async () => {
    const steps: string[] = [];
    let passStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      passStarted = resolve;
    });
    const job = createPeriodicJob({
      name: 'test',
      everyMs: 60_000,
      log: recorder().log,
      async pass(stopping) {
        steps.push('step 1');
        passStarted();
        await rest(3_600_000, stopping);
        steps.push(stopping.aborted ? 'stopping' : 'step 2');
      },
    });
    job.start();
    await vi.advanceTimersByTimeAsync(0);
    await started;
    let stopped = false;
    const stopping = job.stop().then(() => {
      stopped = true;
    });
    await stopping;
    expect(stopped).toBe(true);
    expect(steps).toEqual(['step 1', 'stopping']);
  });
});
