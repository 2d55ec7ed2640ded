import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GroveError } from '../http/errors.ts';
import type { SessionService } from './service.ts';

const PAGE = 1000;
// A comment line this often keeps proxies and the front's upstream timer from closing an idle stream.
const KEEPALIVE_MS = 15_000;

// True when the client asked for an event stream rather than a JSON page.
export function wantsEventStream(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').split(',').some((t) => t.trim().split(';')[0] === 'text/event-stream');
}

// Where to resume: Last-Event-ID (what an EventSource sends on reconnect) beats `after`.
export function resumeFrom(req: IncomingMessage, after: number | undefined): number {
  const raw = req.headers['last-event-id'];
  if (raw === undefined || raw === '') return after ?? 0;
  const v = Array.isArray(raw) ? raw[0]! : raw;
  if (!/^\d{1,10}$/.test(v)) {
    throw new GroveError('VALIDATION_FAILED', 'Last-Event-ID must be a line seq number', {
      errors: [{ path: '/headers/last-event-id', message: 'must be a non-negative integer' }],
    });
  }
  return Number(v);
}

// Streams a session's lines from the store as SSE (`id: <seq>`, `event: line`), following it
// live until it ends with `event: end` carrying the final session. Lines are read from the
// store page by page and written only as fast as the client takes them.
export async function streamOutput(opts: { id: string; after: number; res: ServerResponse; sessions: SessionService }): Promise<void> {
  const { id, res, sessions } = opts;
  await sessions.get(id); // 404 before any header is sent
  let after = opts.after;
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
  sessions.events.on(`progress:${id}`, poke);
  sessions.events.on(`end:${id}`, poke);
  try {
    while (!closed) {
      dirty = false;
      // Status before lines: a session that had ended then has all its lines stored already.
      const status = await sessions.get(id);
      const lines = (await sessions.lines(id, after, PAGE)).lines;
      for (const line of lines) {
        if (closed) return;
        after = line.seq;
        if (!res.write(`id: ${line.seq}\nevent: line\ndata: ${JSON.stringify(line)}\n\n`)) {
          await Promise.race([once(res, 'drain'), once(res, 'close')]);
        }
      }
      if (lines.length === PAGE) continue;
      if (!sessions.isLive(status)) {
        res.write(`event: end\ndata: ${JSON.stringify(status)}\n\n`);
        return;
      }
      if (dirty) continue;
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
    }
  } finally {
    sessions.events.off(`progress:${id}`, poke);
    sessions.events.off(`end:${id}`, poke);
    if (!res.writableEnded) res.end();
  }
}
