// At most `n` of the functions given to run() at a time, the others in order of arrival; one
// whose `signal` aborts while it waits leaves the line, rejected with the signal's reason.
export function createLimiter(n: number) {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`createLimiter: n must be a positive integer, got ${n}`);
  let active = 0;
  const waiting: Array<() => void> = [];
  return {
    async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      signal?.throwIfAborted();
      if (active >= n) await waitTurn(waiting, signal);
      else active++;
      try {
        return await fn();
      } finally {
        const next = waiting.shift();
        if (next) next(); // the slot passes on as it is
        else active--;
      }
    },
    /** nothing runs and nothing waits */
    idle: () => active === 0,
  };
}

// Resolves when `waiting` calls this one's turn; leaves the line if the signal aborts first.
export function waitTurn(waiting: Array<() => void>, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const go = () => {
      signal?.removeEventListener('abort', leave);
      resolve();
    };
    const leave = () => {
      const i = waiting.indexOf(go);
      if (i >= 0) waiting.splice(i, 1);
      reject(signal!.reason);
    };
    waiting.push(go);
    signal?.addEventListener('abort', leave, { once: true });
  });
}

export type Limiter = ReturnType<typeof createLimiter>;

// A limiter per key (a project): different keys never wait for each other; a key's limiter is
// dropped once nothing runs or waits on it.
export function createKeyedLimiter(n: number) {
  const limiters = new Map<string, Limiter>();
  return {
    async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      let limit = limiters.get(key);
      if (!limit) limiters.set(key, (limit = createLimiter(n)));
      try {
        return await limit.run(fn, signal);
      } finally {
        if (limit.idle() && limiters.get(key) === limit) limiters.delete(key);
      }
    },
  };
}

export type KeyedLimiter = ReturnType<typeof createKeyedLimiter>;
