// A carrier inside the process: accepts every submit and sends its receipt after a delay, with outcomes
// drawn at configured rates, so a first run shows receipts without an SMSC. Numbers ending in 0000, 0001
// and 0002 always get an unknown-subscriber failure (NPAI), a rejection and an expiry, for trying those paths.
import { randomBase62 } from '../../shared/ids.ts';
import { type ConnectorStatus, RateMeter } from '../connector-status.ts';
import type { InboundHandler, OutboundPart, Receipt, SubmitOutcome, Transport } from '../transport.ts';

export interface SimulatedOutcome {
  stat: string;
  err: string;
  weight: number;
}

export interface SimulatorOptions {
  /** The connector's name in its status (`pigeon connectors`); `default` when not given. */
  name?: string;
  dlrDelayMs: number;
  outcomes: SimulatedOutcome[];
  /** How long to wait before offering a receipt again when it could not be recorded. */
  redeliverMs?: number;
}

const errOf: Record<string, string> = { DELIVRD: '000', UNDELIV: '001', EXPIRED: '000', REJECTD: '000' };

/** Parses `DELIVRD=97,UNDELIV=2,EXPIRED=1` (weights, not necessarily summing to 100). */
export function parseOutcomes(spec: string): SimulatedOutcome[] {
  const outcomes = spec
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [stat, weight] = entry.split('=');
      const w = Number(weight);
      if (!/^[A-Z]{5,7}$/.test(stat ?? '') || !Number.isFinite(w) || w < 0) {
        throw new Error(`SIM_OUTCOMES: "${entry}" is not STAT=weight`);
      }
      return { stat, err: errOf[stat] ?? '000', weight: w };
    });
  if (outcomes.reduce((sum, o) => sum + o.weight, 0) <= 0)
    throw new Error('SIM_OUTCOMES: weights must add up to more than 0');
  return outcomes;
}

const magic: Record<string, { stat: string; err: string }> = {
  '0000': { stat: 'UNDELIV', err: '001' },
  '0001': { stat: 'REJECTD', err: '000' },
  '0002': { stat: 'EXPIRED', err: '000' },
};

/** The answer to a part its sender no longer wanted written (see Transport.submit). */
const notWritten = {
  ok: false,
  retry: true,
  dlrStatus: 1,
  error: 'not sent: the sender withdrew it',
} as const;

export class SimulatorTransport implements Transport {
  readonly name = 'simulator';
  /** The simulator answers at once; this only bounds how many submits wait for their record. */
  readonly capacity = 1000;
  private handler: InboundHandler | undefined;
  private readonly prefix = randomBase62(6)[0];
  private sequence = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly totalWeight: number;
  private readonly accepted = new RateMeter();

  constructor(private readonly options: SimulatorOptions) {
    this.totalWeight = options.outcomes.reduce((sum, o) => sum + o.weight, 0);
  }

  async start(handler: InboundHandler): Promise<void> {
    this.handler = handler;
  }

  ready(): boolean {
    return this.handler !== undefined;
  }

  private outcomeFor(destination: string): { stat: string; err: string } {
    const fixed = magic[destination.slice(-4)];
    if (fixed) return fixed;
    let draw = Math.random() * this.totalWeight;
    for (const outcome of this.options.outcomes) {
      draw -= outcome.weight;
      if (draw < 0) return outcome;
    }
    return this.options.outcomes[this.options.outcomes.length - 1];
  }

  private later(run: () => void, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, delayMs);
    this.timers.add(timer);
  }

  private deliver(receipt: Receipt): void {
    const handler = this.handler;
    if (!handler) return;
    handler
      .onReceipt(receipt)
      .catch(() => this.later(() => this.deliver(receipt), this.options.redeliverMs ?? 1000));
  }

  async submit(part: OutboundPart, mayWrite?: () => boolean): Promise<SubmitOutcome> {
    if (!this.handler) return { ok: false, retry: true, dlrStatus: 1, error: 'simulator stopped' };
    if (mayWrite && !mayWrite()) return notWritten;
    const smscId = `${this.prefix}${(++this.sequence).toString(16)}`;
    const { stat, err } = this.outcomeFor(part.destination);
    this.later(() => this.deliver({ smscId, stat, err }), this.options.dlrDelayMs);
    this.accepted.add();
    return { ok: true, smscId };
  }

  /** What `pigeon connectors` shows: no binds; bound while started; the receipts awaited as its window. */
  status(): ConnectorStatus {
    const started = this.handler !== undefined;
    return {
      name: this.options.name ?? 'default',
      kind: 'simulator',
      bindsUp: started ? 1 : 0,
      bindsTotal: 1,
      state: started ? 'bound' : 'down',
      windowInUse: 0,
      windowSize: this.capacity,
      pps: this.accepted.perSecond(),
      lastError: null,
      lastErrorAt: null,
    };
  }

  async stop(): Promise<void> {
    this.handler = undefined;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
