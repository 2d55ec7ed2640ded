import { setTimeout as sleep } from 'node:timers/promises';

// The one retry policy: the delay before each try again starts at `delayMs` and grows by
// `factor` (1, the default: a steady pace) up to `maxDelayMs`; `tries` bounds the tries in all
// (none: until it goes through, the failure is not retryable or the signal aborts).
export interface RetryPolicy {
  delayMs: number;
  factor?: number;
  maxDelayMs?: number;
  tries?: number;
}

// The wait before try again number `n` (1 for the first).
export function retryDelay(policy: RetryPolicy, n: number): number {
  return Math.min(policy.delayMs * (policy.factor ?? 1) ** (n - 1), policy.maxDelayMs ?? Number.POSITIVE_INFINITY);
}

// `fn` run until it goes through, tried again after each retryable failure as `policy` says;
// the last failure is thrown once the tries are spent or `retryable` says no. `signal` cuts a
// wait short (rejecting with an AbortError) and ends the tries.
export async function retrying<T>(fn: () => Promise<T>, opts: { policy: RetryPolicy; retryable: (err: unknown) => boolean; signal?: AbortSignal }): Promise<T> {
  const { policy, signal } = opts;
  for (let n = 1; ; n++) {
    try {
      return await fn();
    } catch (err) {
      if (!opts.retryable(err) || signal?.aborted || (policy.tries !== undefined && n >= policy.tries)) throw err;
      await sleep(retryDelay(policy, n), undefined, signal ? { signal } : {});
    }
  }
}
