import { OUTPUT_PAGE_MAX } from '../../schemas/session.ts';
import { wakeOn, type Source, type StreamItem } from '../runtime/follow.ts';
import type { Limiter } from '../runtime/limiter.ts';
import type { TeamWakes } from '../store/wakes.ts';
import type { SessionService } from './service.ts';

// The JSON pages' largest: each round costs store round trips, so a long history comes in few.
const PAGE = OUTPUT_PAGE_MAX;

// A session's lines (`line`, id its seq) after `after`, then `end` with the session once it has
// ended: read from the store page by page, the next page only once the reader took this one,
// so a slow follower holds no more than a page. Its store reads take their turn in
// `streamReads`, shared with every other stream (events/feed.ts). Resolves once the session is
// known to exist: a 404 goes before any header is sent. Another host's session (on a shared
// store) wakes its followers here through `team`, its lines and end stored by its owner.
export async function sessionOutput(opts: { id: string; after: number; sessions: SessionService; streamReads: Limiter; team?: Pick<TeamWakes, 'watch'> }): Promise<Source> {
  const { id, sessions, streamReads, team } = opts;
  await sessions.get(id);
  return async function* (signal): AsyncGenerator<StreamItem> {
    let after = opts.after;
    const wake = wakeOn(signal, (poke) => [sessions.output.onChange(id, poke), sessions.ended.onChange(id, poke), team?.watch(id, poke) ?? (() => {})]);
    try {
      while (!signal.aborted) {
        wake.reset();
        // Status before lines: a session that had ended then has all its lines stored already.
        const [status, lines] = await streamReads.run(async () => {
          const status = await sessions.get(id);
          return [status, (await sessions.lines(id, after, PAGE)).lines] as const;
        });
        if (signal.aborted) return;
        if (lines.length > 0) {
          // A page as one batch: one chunk on the wire instead of one per line.
          after = lines[lines.length - 1]!.seq;
          yield lines.map((line) => ({ event: 'line', data: line, id: line.seq }));
        }
        if (lines.length === PAGE) continue;
        if (sessions.isBusy(status)) {
          await wake.wait();
          continue;
        }
        yield { event: 'end', data: status };
        return;
      }
    } finally {
      wake.stop();
    }
  };
}
