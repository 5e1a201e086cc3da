// Time comes from one injectable clock, so scheduling and expiry are testable without sleeping.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
