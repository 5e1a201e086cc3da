// What a process keeps of a per-key read for a short while, so that the hot paths (a send, a request) cost no
// query while it is remembered: an account's price table, its limits. One read at a time per key (callers in the
// same moment share it); a failed read is not remembered, so the next caller asks again. Past `maxKeys` the
// memory starts afresh. A change made by this process clears it (`forget`); one made by another applies within
// `ttlMs`.

export interface ReadMemory<K, V> {
  /** The value of `key`: from memory when read less than `ttlMs` ago (by the clock given), else read again. */
  get(key: K): Promise<V>;
  /** Forgets every key. */
  forget(): void;
}

export function readMemory<K, V>(options: {
  read: (key: K) => Promise<V>;
  now: () => number;
  ttlMs: number;
  maxKeys: number;
}): ReadMemory<K, V> {
  const { read, now, ttlMs, maxKeys } = options;
  const memory = new Map<K, { value: Promise<V>; readAt: number }>();
  return {
    get(key) {
      const at = now();
      const known = memory.get(key);
      // A clock set back (a test's) reads again rather than trust what it read "later".
      if (known && at - known.readAt < ttlMs && at >= known.readAt) return known.value;
      if (memory.size >= maxKeys) memory.clear();
      const value = read(key);
      memory.set(key, { value, readAt: at });
      value.catch(() => {
        if (memory.get(key)?.value === value) memory.delete(key);
      });
      return value;
    },
    forget() {
      memory.clear();
    },
  };
}
