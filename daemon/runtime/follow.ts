// What a followed source (a session's output, a task's setup, the event feed) yields, and how it
// waits for more: a domain iterator pulled by whoever writes it out (http/sse.ts), one item at
// a time, so a slow reader slows the reads of the store rather than growing a buffer.

// One event of a stream: its name, its JSON data, and its resume point (a seq) if it has one.
export interface StreamEvent {
  event: string;
  data: unknown;
  id?: number;
}

// A batch is written out in one piece (a page of lines in one chunk rather than one per line).
export type StreamItem = StreamEvent | readonly StreamEvent[];

// A followed source: `signal` aborts when the reader goes; the iterator then stops waiting and ends.
export type Source = (signal: AbortSignal) => AsyncIterable<StreamItem>;

export interface Wake {
  /** call at the start of each read: a change after it is not missed */
  reset(): void;
  /** resolves on the first change since reset(), at once if one came already or `signal` aborted */
  wait(): Promise<void>;
  /** stops listening */
  stop(): void;
}

// A latch over the wake-ups `subscribe` registers (each returning what stops it) and `signal`'s abort.
export function wakeOn(signal: AbortSignal, subscribe: (poke: () => void) => Array<() => void>): Wake {
  let dirty = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const stops = subscribe(poke);
  signal.addEventListener('abort', poke);
  return {
    reset() {
      dirty = false;
    },
    async wait() {
      if (dirty || signal.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    },
    stop() {
      for (const stop of stops) stop();
      signal.removeEventListener('abort', poke);
    },
  };
}
