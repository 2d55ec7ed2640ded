// Runs tasks one at a time per key (a project, a path); different keys run in parallel. A task
// run with `{ low: true }` (the warm pool's refills, DESIGN §16) goes after every other task
// waiting for its key, so that work made ahead never holds up work someone waits for.
export function createKeyedMutex() {
  const keys = new Map<string, { high: Array<() => void>; low: Array<() => void> }>();

  // Hands the key to the next waiter (others first), or frees it.
  function release(key: string): void {
    const waiting = keys.get(key)!;
    const next = waiting.high.shift() ?? waiting.low.shift();
    if (next) next();
    else keys.delete(key);
  }

  return {
    async run<T>(key: string, fn: () => Promise<T>, opts: { low?: boolean } = {}): Promise<T> {
      const waiting = keys.get(key);
      if (waiting) await new Promise<void>((r) => (opts.low ? waiting.low : waiting.high).push(r));
      else keys.set(key, { high: [], low: [] });
      try {
        return await fn();
      } finally {
        release(key);
      }
    },
  };
}

export type KeyedMutex = ReturnType<typeof createKeyedMutex>;
