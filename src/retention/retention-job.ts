// The retention job's timer: a pass at start and then every `everyMs`, never two at once.

import type { Log } from '../shared/log.ts';
import type { RetentionService } from './retention.service.ts';

export function createRetentionJob(deps: { retention: RetentionService; everyMs: number; log: Log }) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  async function pass(): Promise<void> {
    try {
      const deleted = await deps.retention.runOnce();
      if (Object.values(deleted).some((n) => n > 0))
        deps.log.info({ deleted }, 'retention: old data deleted');
    } catch (error) {
      deps.log.error({ err: error }, 'retention pass failed; the next one will try again');
    }
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(() => {
        running = undefined;
        schedule(deps.everyMs);
      });
    }, delayMs);
    timer.unref();
  }

  return {
    start: () => schedule(0),
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
