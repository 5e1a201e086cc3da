// The click folder: turns stored clicks into link counters and CLICKER events, thousands per transaction,
// a few milliseconds after the redirects that stored them (links.service.ts `foldClicks`). It runs beside
// each link server; on PostgreSQL the folders of several processes take turns, and any of them folds the
// clicks a stopped or killed process left behind.
import type { Logger } from 'pino';
import { createPollLoop } from '../shared/poll-loop.ts';
import type { LinksService } from './links.service.ts';

interface ClickFolderOptions {
  /** Clicks per fold transaction. */
  batchSize: number;
  /** How long after a group of clicks is stored the fold runs: clicks arriving meanwhile join the fold. */
  delayMs: number;
  /** How often an idle folder looks for clicks stored by other processes (or before a restart). */
  pollMs: number;
}

const defaultClickFolderOptions: ClickFolderOptions = {
  batchSize: 10_000,
  delayMs: 500,
  pollMs: 1000,
};

export function createClickFolder(deps: {
  links: LinksService;
  log: Pick<Logger, 'error'>;
  options?: Partial<ClickFolderOptions>;
}) {
  const { links, log } = deps;
  const { batchSize, delayMs, pollMs } = { ...defaultClickFolderOptions, ...deps.options };
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;

  const loop = createPollLoop({
    pollMs,
    // A full batch means more may be waiting: fold again at once.
    step: async () => (await links.foldClicks(batchSize)) === batchSize,
    onError: (error) => log.error({ err: error }, 'click fold failed; retried at the next poll'),
  });

  return {
    start(): void {
      unsubscribe ??= links.onClicksStored(() => {
        timer ??= setTimeout(() => {
          timer = undefined;
          loop.wake();
        }, delayMs);
      });
      loop.start();
    },

    /** Stops the loop, then folds what is left (the link server is closed first, its clicks stored). */
    async stop(): Promise<void> {
      unsubscribe?.();
      unsubscribe = undefined;
      clearTimeout(timer);
      timer = undefined;
      await loop.stop();
      try {
        while ((await links.foldClicks(batchSize)) === batchSize);
      } catch (error) {
        log.error({ err: error }, 'click fold failed at shutdown; the next start folds the rest');
      }
    },
  };
}
