// The retention job's timer: a pass at start and then every `everyMs` (bounded), never two at once.

import type { Log } from '../shared/log.ts';
import { createPeriodicJob, type PeriodicJob } from '../shared/periodic-job.ts';
import type { RetentionService } from './retention.service.ts';

export function createRetentionJob(deps: {
  retention: Pick<RetentionService, 'runOnce'>;
  /** Time between the ends of two passes (RETENTION_EVERY), bounded as every periodic job's. */
  everyMs: number;
  log: Log;
}): PeriodicJob {
  const { retention, log } = deps;
  return createPeriodicJob({
    name: 'retention',
    everyMs: deps.everyMs,
    log,
    async pass() {
      const deleted = await retention.runOnce();
      if (Object.values(deleted).some((n) => n > 0)) log.info({ deleted }, 'retention: old data deleted');
    },
  });
}
