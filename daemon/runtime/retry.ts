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

// The wait another side asked for in a Retry-After header (RFC 9110 §10.2.3: seconds, or an
// HTTP date), in ms from `now`; undefined when absent or not one of those.
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) || !/[a-z]/i.test(v) ? undefined : Math.max(0, at - now);
}

// The wait before try again number `n` (1 for the first).
export function retryDelay(policy: RetryPolicy, n: number): number {
  return Math.min(policy.delayMs * (policy.factor ?? 1) ** (n - 1), policy.maxDelayMs ?? Number.POSITIVE_INFINITY);
}

// `fn` run until it goes through, tried again after each retryable failure as `policy` says,
// or after the wait the failure itself asks for (`asked`: an answer's Retry-After), never past
// the policy's cap; the last failure is thrown once the tries are spent or `retryable` says no.
// `signal` cuts a wait short (rejecting with an AbortError) and ends the tries.
export async function retrying<T>(
  fn: () => Promise<T>,
  opts: { policy: RetryPolicy; retryable: (err: unknown) => boolean; asked?: (err: unknown) => number | undefined; signal?: AbortSignal },
): Promise<T> {
  const { policy, signal } = opts;
  for (let n = 1; ; n++) {
    try {
      return await fn();
    } catch (err) {
      if (!opts.retryable(err) || signal?.aborted || (policy.tries !== undefined && n >= policy.tries)) throw err;
      const asked = opts.asked?.(err);
      const wait = asked === undefined ? retryDelay(policy, n) : Math.min(asked, policy.maxDelayMs ?? Number.POSITIVE_INFINITY);
      await sleep(wait, undefined, signal ? { signal } : {});
    }
  }
}
