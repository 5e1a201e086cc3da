import type { Clock } from '../../src/shared/clock.ts';

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private ms = Date.UTC(2026, 0, 5, 9, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
