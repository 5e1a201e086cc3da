// Permits to read a large request body. Reading, parsing and answering a body of tens of megabytes takes
// several times its size in memory, so only a few run at once; the others wait, unread, in line.

/** One request's place: in line until `granted` resolves, then holding a permit until it leaves. */
export interface GateTicket {
  granted: Promise<void>;
  /** Gives the permit back, or the place in line if none was granted yet. Safe to call more than once. */
  leave(): void;
}

export class BodyGate {
  private readonly line: (() => void)[] = [];

  constructor(private free: number) {}

  /** Requests waiting for a permit. */
  get waiting(): number {
    return this.line.length;
  }

  enter(): GateTicket {
    let holding = false;
    let left = false;
    let grant: () => void = () => {};
    const granted = new Promise<void>((resolve) => {
      grant = () => {
        holding = true;
        resolve();
      };
    });
    if (this.free > 0) {
      this.free--;
      grant();
    } else this.line.push(grant);
    return {
      granted,
      leave: () => {
        if (left) return;
        left = true;
        if (holding) this.pass();
        else {
          const at = this.line.indexOf(grant);
          if (at >= 0) this.line.splice(at, 1);
        }
      },
    };
  }

  private pass(): void {
    const next = this.line.shift();
    if (next) next();
    else this.free++;
  }
}
