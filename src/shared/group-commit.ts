// Group commit: many small writes that each must be durable before their caller answers, paid for with
// one transaction per batch instead of one per write. This is what lets the redirect path persist every
// click before its 302 and still run at tens of thousands of requests a second.

export interface GroupCommitOptions {
  /** A batch never holds more; items past it start the next batch. */
  maxItems: number;
  /**
   * How long a batch started at rest waits for company before it is written (0, the default: one event-loop
   * turn). Worth a few milliseconds where the writers finish in different turns, as a webhook's requests in
   * flight do: one transaction per turn would then mean one for every one or two items, while the wait
   * costs them nothing (their work is done) and makes batches tens of times larger under load.
   */
  delayMs?: number;
}

interface Batch<T> {
  items: T[];
  promise: Promise<boolean>;
  settle: (written: boolean) => void;
}

/**
 * Items added during one event-loop turn form a batch, written by one call of `write` once the turn's I/O
 * has been read (setImmediate runs after the poll phase), or once `delayMs` has passed when it is set (a
 * batch that fills up first is written at once). While a write is in progress, new items collect into the
 * next batch, which is written as soon as the current one settles: under load batches grow by themselves,
 * at rest an item waits one turn (or `delayMs`). A batch never exceeds `maxItems`; more start a new batch.
 *
 * `add` resolves to true once the item's batch is written, false if the write failed: a failed write is
 * reported once per batch to `onError` (one log line, not one per item) and never rejects, so callers
 * decide what a lost write means for them without a try/catch per item.
 */
export class GroupCommit<T> {
  private readonly queue: Batch<T>[] = [];
  private readonly maxItems: number;
  private readonly delayMs: number;
  private writing = false;
  private scheduled = false;
  /** The wait for company of a batch started at rest, while `delayMs` runs. */
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly onError: (error: unknown, items: T[]) => void,
    options: GroupCommitOptions,
  ) {
    this.maxItems = options.maxItems;
    this.delayMs = options.delayMs ?? 0;
  }

  add(item: T): Promise<boolean> {
    let batch = this.queue.length > 0 ? this.queue[this.queue.length - 1] : undefined;
    // The head batch is being written while `writing` is set and it is the only one queued.
    const headBusy = this.writing && this.queue.length === 1;
    if (batch === undefined || headBusy || batch.items.length >= this.maxItems) {
      batch = newBatch<T>();
      this.queue.push(batch);
    }
    batch.items.push(item);
    if (this.timer !== undefined && batch.items.length >= this.maxItems) {
      // A full batch has all the company it can get: waiting longer only delays it.
      this.writeNow();
    } else if (!this.writing && !this.scheduled) {
      this.scheduled = true;
      if (this.delayMs > 0) this.timer = setTimeout(this.writeNow, this.delayMs);
      else setImmediate(this.run);
    }
    return batch.promise;
  }

  /** Items not yet written (including the batch being written). */
  get pending(): number {
    let count = 0;
    for (const batch of this.queue) count += batch.items.length;
    return count;
  }

  /** Resolves when every item added so far has been written or has failed; a wait for company is cut short. */
  drain(): Promise<void> {
    if (!this.writing && !this.scheduled && this.queue.length === 0) return Promise.resolve();
    if (this.timer !== undefined) this.writeNow();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private readonly writeNow = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.run();
  };

  private readonly run = async (): Promise<void> => {
    this.scheduled = false;
    this.writing = true;
    while (this.queue.length > 0) {
      const batch = this.queue[0];
      let written = false;
      try {
        await this.write(batch.items);
        written = true;
      } catch (error) {
        try {
          this.onError(error, batch.items);
        } catch {
          // A failing reporter must not stop later batches from being written.
        }
      }
      this.queue.shift();
      batch.settle(written);
    }
    this.writing = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  };
}

function newBatch<T>(): Batch<T> {
  let settle!: (written: boolean) => void;
  const promise = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  return { items: [], promise, settle };
}
