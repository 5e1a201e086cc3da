// Writes that each must be durable before their caller moves on, grouped into one transaction per batch.
// Unlike the per-turn group commit of links/, a batch also waits up to `delayMs` for company: a webhook's
// few requests in flight finish in different turns, and one transaction per turn would mean one for every
// one or two deliveries. Waiting a few milliseconds costs a delivery nothing (its request slot is already
// free) and makes the batches tens of times larger under load.

interface Pending<T> {
  item: T;
  done: (written: boolean) => void;
}

export class DelayedBatch<T> {
  private pending: Pending<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly onError: (error: unknown, items: T[]) => void,
    private readonly delayMs: number,
    private readonly maxItems: number,
  ) {}

  /** Resolves to true once the item's batch is written, false if that write failed (reported once per batch). */
  add(item: T): Promise<boolean> {
    return new Promise((done) => {
      this.pending.push({ item, done });
      if (this.pending.length >= this.maxItems) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.delayMs);
    });
  }

  /** Writes everything added so far, now. */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.writing) {
      this.flush();
      await this.writing;
    }
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // Items added while a batch is being written are taken by the same loop right after it.
    this.writing ??= this.run();
  }

  private async run(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxItems);
      const items = batch.map((p) => p.item);
      let written = false;
      try {
        await this.write(items);
        written = true;
      } catch (error) {
        this.onError(error, items);
      }
      for (const p of batch) p.done(written);
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = undefined;
  }
}
