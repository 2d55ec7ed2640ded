import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode } from '../../daemon/errors.ts';
import { fail, type Result } from '../result.ts';

// What a review task answers when its bound runs out, and the port that tells it to stop: the
// message 'timeout' when the bound has run out, any other when its client has gone. The daemon
// keeps the bound's clock, started when the request arrived, so that the time a task waited (for
// a place, a turn, a thread) counts in it. A pool task cannot take an AbortSignal (Piscina would
// end the whole thread and the other tasks it runs), so the stop crosses as a port.
export interface Bound {
  port: MessagePort;
  code: ErrorCode;
  detail: string;
}

// A review task with its bound: `fn` gets one signal, aborted when told to stop, and threads it
// into each git call it makes; a failure after that is the bound's, or the client's.
export function bounded<I, T>(fn: (input: I, signal: AbortSignal) => Promise<Result<T>>) {
  return async (input: I & { bound: Bound }): Promise<Result<T>> => {
    const { bound, ...rest } = input;
    const stop = new AbortController();
    bound.port.once('message', (why) => stop.abort(why === 'timeout' ? new DOMException(bound.detail, 'TimeoutError') : new Error('the client has gone')));
    try {
      const res = await fn(rest as unknown as I, stop.signal);
      if (res.ok || !stop.signal.aborted) return res;
      return timedOut(stop.signal) ? fail(bound.code, bound.detail) : fail('UNAVAILABLE', 'stopped: the client has gone');
    } finally {
      bound.port.close();
    }
  };
}

function timedOut(signal: AbortSignal): boolean {
  return (signal.reason as Error).name === 'TimeoutError';
}
