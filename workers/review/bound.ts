import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode } from '../../daemon/errors.ts';
import { fail, type Result } from '../result.ts';
import type { TimeBound } from '../timeout.ts';

// How long a review task may take and what it answers when it runs out; any message on `port`
// means its client has gone. A pool task cannot take an AbortSignal (Piscina would end the whole
// thread and the other tasks it runs), so the daemon's signal crosses as a port.
export interface Bound extends TimeBound {
  port: MessagePort;
  code: ErrorCode;
}

// A review task with its bound: `fn` gets one signal, aborted on the bound or the cancel, and
// threads it into each git call it makes; a failure after that is the bound's, or the client's.
export function bounded<I, T>(fn: (input: I, signal: AbortSignal) => Promise<Result<T>>) {
  return async (input: I & { bound: Bound }): Promise<Result<T>> => {
    const { bound, ...rest } = input;
    const cancel = new AbortController();
    bound.port.once('message', () => cancel.abort(new Error('the client has gone')));
    const signal = AbortSignal.any([cancel.signal, AbortSignal.timeout(bound.ms)]);
    try {
      const res = await fn(rest as unknown as I, signal);
      if (res.ok || !signal.aborted) return res;
      if (cancel.signal.aborted) return fail('UNAVAILABLE', 'stopped: the client has gone');
      return fail(bound.code, bound.detail);
    } finally {
      bound.port.close();
    }
  };
}
