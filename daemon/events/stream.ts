import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GroveError } from '../errors.ts';

// A comment line this often keeps proxies and the front's upstream timer from closing an idle stream.
const KEEPALIVE_MS = 15_000;

export interface EventStream {
  readonly closed: boolean;
  /** writes, waiting for the client when its buffer is full */
  write(text: string): Promise<void>;
  /** call at the start of each read of the store: changes after it are not missed */
  beginRound(): void;
  /** resolves on the next change since beginRound(), a closed client, or a keepalive tick */
  waitForChange(): Promise<void>;
  end(): void;
}

// What to do with a client that takes nothing for `ms` while there is more to send: the stream
// ends with `last` written (it reaches the client if it ever reads), then the connection closes.
export interface Stall {
  ms: number;
  last: () => string;
}

// An SSE response woken by `events` on `emitter`: the loop reads the store, writes, and waits.
export function openEventStream(res: ServerResponse, emitter: EventEmitter, events: string[], stall?: Stall): EventStream {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  let closed = false;
  let dirty = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  res.once('close', () => {
    closed = true;
    wake?.();
  });
  for (const e of events) emitter.on(e, poke);
  return {
    get closed() {
      return closed;
    },
    async write(text) {
      if (closed) return;
      if (res.write(text)) return;
      // Whichever comes first; the others' listeners go with it, or a long stream piles them up.
      const how = await new Promise<'drain' | 'close' | 'stalled'>((resolve) => {
        const done = (why: 'drain' | 'close' | 'stalled') => {
          res.off('drain', onDrain);
          res.off('close', onClose);
          clearTimeout(timer);
          resolve(why);
        };
        const onDrain = () => done('drain');
        const onClose = () => done('close');
        res.once('drain', onDrain);
        res.once('close', onClose);
        const timer = stall ? setTimeout(() => done('stalled'), stall.ms) : undefined;
      });
      if (how === 'stalled' && stall) {
        // Its buffer stays bounded: nothing more is read for it. It may resume from its last id.
        closed = true;
        res.end(stall.last());
        // If it never reads even that, its connection goes.
        setTimeout(() => res.destroy(), Math.min(stall.ms * 20, 600_000)).unref();
      }
    },
    beginRound() {
      dirty = false;
    },
    async waitForChange() {
      if (dirty || closed) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          if (!closed) res.write(': keepalive\n\n');
          resolve();
        }, KEEPALIVE_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    },
    end() {
      for (const e of events) emitter.off(e, poke);
      if (!res.writableEnded) res.end();
    },
  };
}

// What a round of a follow loop asks for next: stop, read again at once, or wait for a change.
export type Next = 'end' | 'more' | 'wait';

// The one follow loop of every event stream (session output, setup): `round` reads the store
// from where the last one stopped and sends what is new; changes signalled during a round are
// not missed, since the next wait returns at once.
export async function follow(
  res: ServerResponse,
  emitter: EventEmitter,
  events: string[],
  round: (send: (text: string) => Promise<void>, closed: () => boolean) => Promise<Next>,
  stall?: Stall,
): Promise<void> {
  const stream = openEventStream(res, emitter, events, stall);
  try {
    while (!stream.closed) {
      stream.beginRound();
      const next = await round((text) => stream.write(text), () => stream.closed);
      if (next === 'end') return;
      if (next === 'wait') await stream.waitForChange();
    }
  } finally {
    stream.end();
  }
}

// One SSE event block.
export function sseEvent(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

// True when the client asked for an event stream rather than a JSON page.
export function wantsEventStream(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').split(',').some((t) => t.trim().split(';')[0] === 'text/event-stream');
}

// Where to resume: Last-Event-ID (what an EventSource sends on reconnect) beats `after`.
export function resumeFrom(req: IncomingMessage, after: number | undefined, max: number): number {
  const raw = req.headers['last-event-id'];
  if (raw === undefined || raw === '') return after ?? 0;
  const v = Array.isArray(raw) ? raw[0]! : raw;
  if (!/^\d{1,16}$/.test(v) || Number(v) > max) {
    throw new GroveError('VALIDATION_FAILED', `Last-Event-ID must be a seq number, at most ${max}`, {
      errors: [{ path: '/headers/last-event-id', message: `must be an integer from 0 to ${max}` }],
    });
  }
  return Number(v);
}
