import type { ServerResponse } from 'node:http';
import { OUTPUT_PAGE_MAX } from '../../schemas/session.ts';
import { follow, sseEvent } from '../events/stream.ts';
import type { Limiter } from '../runtime/limiter.ts';
import type { SessionService } from './service.ts';

// The JSON pages' largest: each round costs store round trips, so a long history comes in few.
const PAGE = OUTPUT_PAGE_MAX;

// A session's lines as SSE until `event: end`, read from the store page by page and written only
// as fast as the client takes them, so a slow follower holds no more than a page. Its store
// reads take their turn in `streamReads`, shared with every other stream (events/feed.ts).
export async function streamOutput(opts: { id: string; after: number; res: ServerResponse; sessions: SessionService; streamReads: Limiter }): Promise<void> {
  const { id, res, sessions, streamReads } = opts;
  await sessions.get(id); // 404 before any header is sent
  let after = opts.after;
  await follow(res, sessions.events, [`progress:${id}`, `end:${id}`], async (send, closed) => {
    // Status before lines: a session that had ended then has all its lines stored already.
    const [status, lines] = await streamReads.run(async () => {
      const status = await sessions.get(id);
      return [status, (await sessions.lines(id, after, PAGE)).lines] as const;
    });
    if (closed()) return 'end';
    if (lines.length > 0) {
      // A page in one write: one chunk on the wire instead of one per line.
      after = lines[lines.length - 1]!.seq;
      await send(lines.map((line) => sseEvent('line', line, line.seq)).join(''));
    }
    if (lines.length === PAGE) return 'more';
    if (sessions.isLive(status)) return 'wait';
    await send(sseEvent('end', status));
    return 'end';
  });
}
