import type { IncomingMessage, ServerResponse } from 'node:http';
import { GroveError } from '../errors.ts';
import type { Source, StreamEvent, StreamItem } from '../runtime/follow.ts';

// A comment line this often keeps proxies and the front's upstream timer from closing an idle stream.
const KEEPALIVE_MS = 15_000;

// What to do with a client that takes nothing for `ms` while there is more to send: the stream
// ends with `last` written (it reaches the client if it ever reads), then the connection closes.
// `last` gets the id of the last event written, if any.
export interface Stall {
  ms: number;
  last: (lastId: number | undefined) => StreamEvent;
}

// The one SSE writer: headers, then each item `source` yields, pulled only once the one before
// it is written (so the client's pace sets the source's), with keepalive comments while the
// source waits. When the client goes (or stalls), the source's signal aborts and it is returned.
export async function writeSse(res: ServerResponse, source: Source, opts: { stall?: Stall; keepaliveMs?: number } = {}): Promise<void> {
  const { stall } = opts;
  const keepaliveMs = opts.keepaliveMs ?? KEEPALIVE_MS;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const abort = new AbortController();
  let closed = false;
  const onClose = () => {
    closed = true;
    abort.abort();
  };
  res.once('close', onClose);
  let lastId: number | undefined;

  // Writes, waiting for the client when its buffer is full; false once the stream is over.
  async function write(text: string): Promise<boolean> {
    if (closed) return false;
    if (res.write(text)) return true;
    // Whichever comes first; the others' listeners go with it, or a long stream piles them up.
    const how = await new Promise<'drain' | 'close' | 'stalled'>((resolve) => {
      const done = (why: 'drain' | 'close' | 'stalled') => {
        res.off('drain', onDrain);
        res.off('close', onGone);
        clearTimeout(timer);
        resolve(why);
      };
      const onDrain = () => done('drain');
      const onGone = () => done('close');
      res.once('drain', onDrain);
      res.once('close', onGone);
      const timer = stall ? setTimeout(() => done('stalled'), stall.ms) : undefined;
    });
    if (how === 'stalled' && stall) {
      // Its buffer stays bounded: nothing more is read for it. It may resume from its last id.
      closed = true;
      res.end(format(stall.last(lastId)));
      // If it never reads even that, its connection goes.
      setTimeout(() => res.destroy(), Math.min(stall.ms * 20, 600_000)).unref();
    }
    return !closed;
  }

  // The source's next item; while it waits, a keepalive comment now and then.
  async function next(it: AsyncIterator<StreamItem>): Promise<IteratorResult<StreamItem>> {
    const pending = it.next();
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((resolve) => (timer = setTimeout(() => resolve('tick'), keepaliveMs)));
      const r = await Promise.race([pending, tick]).finally(() => clearTimeout(timer));
      if (r !== 'tick') return r;
      if (!closed) res.write(': keepalive\n\n');
    }
  }

  const it = source(abort.signal)[Symbol.asyncIterator]();
  let finished = false;
  try {
    while (!closed) {
      const r = await next(it);
      if (r.done) {
        finished = true;
        break;
      }
      const items: readonly StreamEvent[] = Array.isArray(r.value) ? r.value : [r.value as StreamEvent];
      if (items.length === 0) continue;
      for (const e of items) if (e.id !== undefined) lastId = e.id;
      if (!(await write(items.map(format).join('')))) break;
    }
  } finally {
    res.off('close', onClose);
    abort.abort();
    if (!finished) await it.return?.();
    if (!res.writableEnded) res.end();
  }
}

const format = (e: StreamEvent): string => sseEvent(e.event, e.data, e.id);

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
