// The loop of a worker that takes leased jobs from the database: a periodic sweep (expired leases and the
// like), then steps while there is work, resting `pollMs` when there is none or a step failed.

export interface PollLoopOptions {
  pollMs: number;
  /** How often `sweep` runs, on wall time: it is about how often to look, not about what is due. */
  sweepMs?: number;
  sweep?(): Promise<void>;
  /** Does one round of work; false when there was nothing to do (the loop rests). */
  step(): Promise<boolean>;
  onError(error: unknown): void;
}

export interface PollLoop {
  start(): void;
  /** Ends the rest early: look for work now. */
  wake(): void;
  /** Resolves once the step in progress, if any, has finished. */
  stop(): Promise<void>;
}

export function createPollLoop(options: PollLoopOptions): PollLoop {
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  // A wake that comes while a step runs is kept, so the rest after that step is skipped, not slept through.
  let wakeRequested = false;
  let lastSweep = 0;

  function wake(): void {
    if (wakeUp) wakeUp();
    else wakeRequested = true;
  }

  function rest(): Promise<void> {
    if (wakeRequested) {
      wakeRequested = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, options.pollMs);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = done;
    });
  }

  async function run(): Promise<void> {
    while (running) {
      try {
        if (options.sweep && Date.now() - lastSweep >= (options.sweepMs ?? 0)) {
          lastSweep = Date.now();
          await options.sweep();
        }
        if (!(await options.step())) await rest();
      } catch (error) {
        options.onError(error);
        await rest();
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    wake,
    async stop() {
      running = false;
      wake();
      await loop;
    },
  };
}
