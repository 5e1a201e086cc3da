// The brake on failed binds per client address: RATE_LIMIT_AUTH_FAILURES within RATE_LIMIT_AUTH_WINDOW, as
// the API brakes failed sign-ins (src/http/rate-limits.ts). While braked, an address's binds are refused
// unchecked: an SMPP password is at most 8 characters, guessable without it. Windows are fixed, from an
// address's first failure, in this process's memory, on the injected clock.
export function createBindBrake(options: {
  failures: number;
  windowMs: number;
  now: () => number;
  maxKeys?: number;
}) {
  const windows = new Map<string, { count: number; startedAt: number }>();
  const maxKeys = options.maxKeys ?? 10_000;
  const current = (ip: string) => {
    const w = windows.get(ip);
    if (!w) return undefined;
    const now = options.now();
    if (now >= w.startedAt + options.windowMs || now < w.startedAt) {
      windows.delete(ip);
      return undefined;
    }
    return w;
  };
  return {
    /** Whether binds from `ip` are refused unchecked now. */
    braked(ip: string): boolean {
      if (options.failures === 0) return false;
      return (current(ip)?.count ?? 0) >= options.failures;
    },
    /** Counts a failed bind from `ip`. */
    failed(ip: string): void {
      if (options.failures === 0) return;
      const w = current(ip);
      if (w) {
        w.count++;
        return;
      }
      if (windows.size >= maxKeys) windows.delete(windows.keys().next().value as string);
      windows.set(ip, { count: 1, startedAt: options.now() });
    },
  };
}
