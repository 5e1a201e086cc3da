import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, durationMs, loadConfig } from '../config.ts';
import { silentLog } from '../shared/log.ts';
import { maxTimerMs } from '../shared/periodic-job.ts';
import { createRetentionJob } from './retention-job.ts';

const none = { message: 0, list: 0, campaign: 0, mo: 0, lookup: 0, audit: 0 };

describe('RETENTION_EVERY is bounded', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('RETENTION_EVERY=0s is refused at start, naming the variable; 1s is taken', () => {
    expect(() => loadConfig({ RETENTION_EVERY: '0s' })).toThrow(ConfigError);
    expect(() => loadConfig({ RETENTION_EVERY: '0s' })).toThrow(
      /RETENTION_EVERY: must be 1s or more \(the time between two retention passes\), got 0s/,
    );
    expect(loadConfig({ RETENTION_EVERY: '1s' }).RETENTION_EVERY).toBe('1s');
  });

  it('RETENTION_EVERY=30d runs a pass at start and the next after the longest a timer holds, not 1 ms later', async () => {
    let passes = 0;
    const job = createRetentionJob({
      retention: {
        runOnce: async () => {
          passes++;
          return none;
        },
      },
      everyMs: durationMs(loadConfig({ RETENTION_EVERY: '30d' }).RETENTION_EVERY),
      log: silentLog,
    });
    job.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(86_400_000);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(maxTimerMs - 86_400_000);
    expect(passes).toBe(2);
    await job.stop();
  });
});
