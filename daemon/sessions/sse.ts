import type { IncomingMessage, ServerResponse } from 'node:http';
import { GroveError } from '../http/errors.ts';
import { openEventStream } from '../http/event-stream.ts';
import type { SessionService } from './service.ts';

const PAGE = 1000;

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
  const stream = openEventStream(res, sessions.events, [`progress:${id}`, `end:${id}`]);
  try {
    while (!stream.closed) {
      stream.beginRound();
      // Status before lines: a session that had ended then has all its lines stored already.
      const status = await sessions.get(id);
      const lines = (await sessions.lines(id, after, PAGE)).lines;
      for (const line of lines) {
        if (stream.closed) return;
        after = line.seq;
        await stream.write(`id: ${line.seq}\nevent: line\ndata: ${JSON.stringify(line)}\n\n`);
      }
      if (lines.length === PAGE) continue;
      if (!sessions.isLive(status)) {
        await stream.write(`event: end\ndata: ${JSON.stringify(status)}\n\n`);
        return;
      }
      await stream.waitForChange();
    }
  } finally {
    stream.end();
  }
}
