import { createRegistry } from './registry.ts';

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
  const byKey = createRegistry<K, (key: K) => void>();
  // Listeners of every key: one key of their own.
  const any = createRegistry<null, (key: K) => void>();
  return {
    changed(key) {
      for (const fn of byKey.get(key)) fn(key);
      for (const fn of any.get(null)) fn(key);
    },
    onChange: (key, fn) => byKey.add(key, fn),
    onAnyChange: (fn) => any.add(null, fn),
    listenerCount(key?: K) {
      return key !== undefined ? byKey.count(key) : byKey.count() + any.count();
    },
  };
}
