// The bytes of large request bodies the API holds at once. A permit of the gate (body-gate.ts) bounds how many
// large bodies are read together, not how large they are: two bodies at the 32 MB limit, parsed and answered,
// took the process past 650 MB. The budget bounds their sum instead: a body whose declared length does not
// fit is refused before it is read, and one sent chunked draws on it chunk by chunk as it arrives.

/** One request's share of the budget: grows as its body is admitted, given back whole once it leaves. */
export interface BudgetShare {
  /** Takes `bytes` more if they fit in what is left; false (and nothing taken) if they do not. */
  grow(bytes: number): boolean;
  /** Gives back everything this share holds. Safe to call more than once. */
  release(): void;
}

export class BodyBudget {
  private used = 0;
  private highest = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes held now by bodies being read, parsed or answered. */
  get inFlightBytes(): number {
    return this.used;
  }

  /** The most bytes held at once since the process started. */
  get peakBytes(): number {
    return this.highest;
  }

  share(): BudgetShare {
    let held = 0;
    return {
      grow: (bytes) => {
        if (this.used + bytes > this.limitBytes) return false;
        this.used += bytes;
        held += bytes;
        if (this.used > this.highest) this.highest = this.used;
        return true;
      },
      release: () => {
        this.used -= held;
        held = 0;
      },
    };
  }
}
