// One periodic job: a pass at start, then one `everyMs` after each pass ends, never two at once. A failed pass
// is logged and the next one runs as usual; `stop` cuts the rests short and waits for the pass under way.
import type { Log } from './log.ts';

/** The shortest time between two passes: the configuration's smallest period (`1s`), never back to back. */
export const minEveryMs = 1000;
/** Node's timers hold at most 2^31 - 1 ms (about 24.8 days): a longer one fires after 1 ms instead. */
export const maxTimerMs = 2 ** 31 - 1;

/** A job's period within its bounds: at least `minEveryMs`; a longer one than a timer holds waits that long. */
const boundedEveryMs = (everyMs: number): number =>
  Math.min(Math.max(Number.isFinite(everyMs) ? everyMs : maxTimerMs, minEveryMs), maxTimerMs);

export interface PeriodicJobOptions {
  /** How the job's log lines name it (`pruning`, `retention`). */
  name: string;
  /** Time between the end of a pass and the start of the next, bounded by `boundedEveryMs`. */
  everyMs: number;
  /** One pass; `stopping` is aborted when the job stops, for a pass to end early between two of its steps. */
  pass(stopping: AbortSignal): Promise<void>;
  log: Log;
}

export interface PeriodicJob {
  /** A pass now (on the next turn), then one `everyMs` after each pass ends. */
  start(): void;
  /** Aborts the pass's signal, lets the pass under way finish, and starts no other. */
  stop(): Promise<void>;
}

export function createPeriodicJob(options: PeriodicJobOptions): PeriodicJob {
  const { name, pass, log } = options;
  const everyMs = boundedEveryMs(options.everyMs);
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function runPass(): Promise<void> {
    try {
      await pass(stopping.signal);
    } catch (error) {
      log.error({ err: error }, `${name} pass failed; the next one will try again`);
    }
  }

  function schedule(delayMs: number): void {
    if (stopping.signal.aborted) return;
    timer = setTimeout(() => {
      running = runPass().finally(() => {
        running = undefined;
        schedule(everyMs);
      });
    }, delayMs);
    timer.unref();
  }

  return {
    start: () => schedule(0),
    async stop(): Promise<void> {
      stopping.abort();
      clearTimeout(timer);
      await running;
    },
  };
}

/** Rests `ms` within a pass, or less when `signal` aborts (the job stopping); `0` yields one turn. */
export function rest(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms === 0 || signal?.aborted) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
