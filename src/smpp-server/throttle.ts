// Requests (submits, or queries) per second per SMPP user (its `tps`), across its binds on this process: fixed
// one-second windows on the injected clock. A request above it is answered ESME_RTHROTTLED (a submit is not sent).
export function createThrottle(now: () => number) {
  const windows = new Map<number, { second: number; count: number }>();
  return {
    /** Takes one submit of `userId` if its `tps` allows it (0: no limit). */
    take(userId: number, tps: number): boolean {
      if (tps <= 0) return true;
      const second = Math.floor(now() / 1000);
      const w = windows.get(userId);
      if (!w || w.second !== second) {
        windows.set(userId, { second, count: 1 });
        return true;
      }
      if (w.count >= tps) return false;
      w.count++;
      return true;
    },
  };
}
