import { once } from './once.ts';

// The one "run once more if woken while running" loop: `run(key)` starts `fn(key)`, or, while
// that key's run is going, marks it to go round once more (however many times it is asked) and
// answers the running one's promise, which ends after that extra round. Keys run in parallel.
// A throw of `fn` ends that key's run (the promise rejects) and drops its "again": callers that
// must go on catch inside `fn`. close() stops further runs and waits for the running ones.
export function createCoalescer<K = string>(fn: (key: K) => Promise<void>) {
  const runs = new Map<K, Promise<void>>();
  const again = new Set<K>();
  let closed = false;

  return {
    run(key: K): Promise<void> {
      if (closed) return Promise.resolve();
      const running = runs.get(key);
      if (running) {
        again.add(key);
        return running;
      }
      let ended = false;
      const p = (async () => {
        try {
          do {
            again.delete(key);
            await fn(key);
          } while (again.has(key) && !closed);
        } finally {
          // In the same turn as the last check: a run() after it starts anew rather than being lost.
          ended = true;
          again.delete(key);
          runs.delete(key);
        }
      })();
      if (!ended) runs.set(key, p);
      return p;
    },
    // Whether the key's running run was asked to go round once more (a long round may cut itself short).
    pending(key: K): boolean {
      return again.has(key);
    },
    // The key's run going now, if any.
    running(key: K): Promise<void> | undefined {
      return runs.get(key);
    },
    close: once(async () => {
      closed = true;
      await Promise.allSettled([...runs.values()]);
    }),
  };
}

export type Coalescer<K = string> = ReturnType<typeof createCoalescer<K>>;
