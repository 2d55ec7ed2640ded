// At most `n` of the functions given to run() at a time, the others in order of arrival.
export function createLimiter(n: number) {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`createLimiter: n must be a positive integer, got ${n}`);
  let active = 0;
  const waiting: Array<() => void> = [];
  return {
    async run<T>(fn: () => Promise<T>): Promise<T> {
      if (active >= n) await new Promise<void>((r) => waiting.push(r));
      else active++;
      try {
        return await fn();
      } finally {
        const next = waiting.shift();
        if (next) next(); // the slot passes on as it is
        else active--;
      }
    },
  };
}

export type Limiter = ReturnType<typeof createLimiter>;
