// Requests (submits, or queries) per second per SMPP user (its `tps`), across its binds on this process: fixed
// one-second windows on the injected clock. A request above it is answered ESME_RTHROTTLED (a submit is not sent).
export function createThrottle(now: () => number) {
  const windows = new Map<number, { second: number; count: number }>();
  return {
    /**
     * Takes `count` messages of `userId` (a submit_multi's destinations) if its `tps` allows them (0: no
     * limit). More than `tps` at once are taken only by a second of their own, which they fill.
     */
    take(userId: number, tps: number, count = 1): boolean {
      if (tps <= 0) return true;
      const second = Math.floor(now() / 1000);
      const w = windows.get(userId);
      if (!w || w.second !== second) {
        windows.set(userId, { second, count });
        return true;
      }
      if (w.count + count > tps) return false;
      w.count += count;
      return true;
    },
  };
}
