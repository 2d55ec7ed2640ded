// The one wait for a wake-up: until the first poke of what `subscribe` registers (each
// registration returning what stops it), `ms` passing, or `signal` aborting, whichever comes
// first; everything is stopped then. It subscribes at once, so a wake-up between the call and
// the await is not missed: read what is waited on after calling it. A stream's repeated waits
// use follow.ts' wakeOn, the same registrations held for the stream's life.
export type WaitEnd = 'woken' | 'timeout' | 'aborted';

export interface Waiting {
  /** how the wait ended */
  done: Promise<WaitEnd>;
  /** ends it (as woken) and stops every registration; again is nothing */
  stop(): void;
}

export function waitFor(subscribe: (wake: () => void) => Array<() => void>, opts: { ms?: number; signal?: AbortSignal } = {}): Waiting {
  let settle!: (end: WaitEnd) => void;
  let ended = false;
  const done = new Promise<WaitEnd>((resolve) => (settle = resolve));
  const end = (how: WaitEnd) => {
    if (ended) return;
    ended = true;
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    for (const stop of stops) stop();
    settle(how);
  };
  const onAbort = () => end('aborted');
  const timer = opts.ms === undefined ? null : setTimeout(() => end('timeout'), opts.ms);
  const stops = subscribe(() => end('woken'));
  if (opts.signal?.aborted) end('aborted');
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  return { done, stop: () => end('woken') };
}
