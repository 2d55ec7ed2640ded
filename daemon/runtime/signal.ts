// A typed wake-up: `changed(key)` tells whoever listens for that key (or for any key) that
// something about it changed; listeners then read the new state themselves. Each meaning gets
// its own signal (a session's output, its end, its deadline...), passed to who fires and who
// listens, so a reader can follow a wake-up from one to the other by name.
export interface Signal<K> {
  changed(key: K): void;
  /** calls `fn` on each change of `key`; returns what stops it */
  onChange(key: K, fn: (key: K) => void): () => void;
  /** calls `fn` on each change of any key; returns what stops it */
  onAnyChange(fn: (key: K) => void): () => void;
  /** how many listeners are registered (for `key`, or in all) */
  listenerCount(key?: K): number;
}

// The side a listener is given: it cannot fire what it follows.
export type Listen<K> = Omit<Signal<K>, 'changed'>;

export function createSignal<K = string>(): Signal<K> {
  const byKey = new Map<K, Set<(key: K) => void>>();
  const any = new Set<(key: K) => void>();
  return {
    changed(key) {
      // Copies: a listener may stop itself (or another) while it is called.
      for (const fn of [...(byKey.get(key) ?? [])]) fn(key);
      for (const fn of [...any]) fn(key);
    },
    onChange(key, fn) {
      // Each registration is its own entry, so the same function registered twice stops separately.
      const entry = (k: K) => fn(k);
      let set = byKey.get(key);
      if (!set) byKey.set(key, (set = new Set()));
      set.add(entry);
      return () => {
        const s = byKey.get(key);
        if (!s?.delete(entry)) return;
        if (s.size === 0) byKey.delete(key);
      };
    },
    onAnyChange(fn) {
      const entry = (k: K) => fn(k);
      any.add(entry);
      return () => void any.delete(entry);
    },
    listenerCount(key?: K) {
      if (key !== undefined) return byKey.get(key)?.size ?? 0;
      let n = any.size;
      for (const s of byKey.values()) n += s.size;
      return n;
    },
  };
}
