import { waitTurn } from './limiter.ts';

// Runs tasks one at a time per key (a project, a path); different keys run in parallel. A task
// run with `{ low: true }` (the warm pool's refills, DESIGN §16) goes after every other task
// waiting for its key, so that work made ahead never holds up work someone waits for. One whose
// `signal` aborts while it waits leaves the line, rejected with the signal's reason.
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
    async run<T>(key: string, fn: () => Promise<T>, opts: { low?: boolean; signal?: AbortSignal | undefined } = {}): Promise<T> {
      opts.signal?.throwIfAborted();
      const waiting = keys.get(key);
      if (waiting) await waitTurn(opts.low ? waiting.low : waiting.high, opts.signal);
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
