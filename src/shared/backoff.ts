// Retries back off exponentially: the wait doubles after each failure, up to a ceiling, so a peer that is
// down is not hammered and one that is back is retried soon enough.

/** The wait before retry number `attempt` (from 1): `baseMs`, doubled for each attempt before it, at most `maxMs`. */
export const backoffMs = (attempt: number, baseMs: number, maxMs: number): number =>
  Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
