// A parts-per-second budget: up to one second's worth at once, then `rate` a second.

export class TokenBucket {
  private tokens: number;
  private refilledAt = Date.now();

  constructor(private readonly rate: number) {
    this.tokens = Math.max(1, rate);
  }

  /** Takes one token, waiting for the budget to refill. */
  async take(): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(
        Math.max(1, this.rate),
        this.tokens + ((now - this.refilledAt) * this.rate) / 1000,
      );
      this.refilledAt = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(((1 - this.tokens) * 1000) / this.rate)));
    }
  }
}
