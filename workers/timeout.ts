import { fail, type Result } from './result.ts';

// A pool task's time bound: how long its git may take, and the GIT_TIMEOUT detail it answers then.
export interface TimeBound {
  ms: number;
  detail: string;
}

// Runs `fn` with a signal aborted at the bound (none without one); a failure once it has fired is
// the bound's.
export async function timed<T>(bound: TimeBound | undefined, fn: (signal: AbortSignal | undefined) => Promise<Result<T>>): Promise<Result<T>> {
  const signal = bound ? AbortSignal.timeout(bound.ms) : undefined;
  const res = await fn(signal);
  return res.ok || !signal?.aborted ? res : fail('GIT_TIMEOUT', bound!.detail);
}
