// The one keyed listener registry: functions registered under a key (a channel, a session's id,
// a command's id), each registration its own entry (the same function added twice is stopped
// twice), read as copies so that a listener may stop itself or another while it is called.
export function createRegistry<K, F>() {
  const byKey = new Map<K, Set<{ fn: F }>>();
  return {
    /** registers `fn` under `key`; returns what stops it (again is nothing) */
    add(key: K, fn: F): () => void {
      const entry = { fn };
      let set = byKey.get(key);
      if (!set) byKey.set(key, (set = new Set()));
      set.add(entry);
      return () => {
        const s = byKey.get(key);
        if (!s?.delete(entry)) return;
        if (s.size === 0) byKey.delete(key);
      };
    },
    /** the functions of `key` now */
    get(key: K): F[] {
      return [...(byKey.get(key) ?? [])].map((e) => e.fn);
    },
    /** every function of every key now */
    all(): F[] {
      return [...byKey.values()].flatMap((set) => [...set].map((e) => e.fn));
    },
    /** the keys with a function */
    keys: (): K[] => [...byKey.keys()],
    has: (key: K): boolean => byKey.has(key),
    /** how many functions are registered (under `key`, or in all) */
    count(key?: K): number {
      if (key !== undefined) return byKey.get(key)?.size ?? 0;
      let n = 0;
      for (const s of byKey.values()) n += s.size;
      return n;
    },
    clear: (): void => byKey.clear(),
  };
}

export type Registry<K, F> = ReturnType<typeof createRegistry<K, F>>;
