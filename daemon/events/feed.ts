import type { GroveEvent } from '../../schemas/event.ts';
import { wakeOn, type StreamEvent } from '../runtime/follow.ts';
import type { Limiter } from '../runtime/limiter.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { EventFilter, EventsTable } from '../store/events.ts';
import type { EventBus } from './bus.ts';

// At least this many of the newest events stay in the store (DESIGN §11).
export const KEEP_EVENTS = 10_000;
// Pruning runs after this many new events, deleting at most this many per statement.
const PRUNE_EVERY = 500;
const PRUNE_BATCH = 1000;
const PAGE = 1000;
// A client that takes nothing for this long while events wait for it is dropped; it resumes
// with Last-Event-ID.
export const STALL_MS = 30_000;

// GET /api/events (DESIGN §11) as pages and as a followed source, and the pruning of old events.
// `streamReads` is shared by every event stream (and output stream) of the daemon: their store
// reads wait their turn there, so that streams catching up take the store a few pages at a time
// and other readers are not queued behind hundreds of pages.
export function createEventFeed(deps: { bus: EventBus; events: EventsTable; streamReads: Limiter; log: Logger; stallMs?: number }) {
  const { bus, events, streamReads, log } = deps;
  const stallMs = deps.stallMs ?? STALL_MS;
  let sincePrune = 0;
  let pruning: Promise<void> | null = null;

  // Older events go in short statements, one after another, never on the path of a write.
  function prune(): void {
    pruning ??= (async () => {
      try {
        while ((await events.prune(KEEP_EVENTS, PRUNE_BATCH)) > 0);
      } catch (err) {
        log.warn({ err }, 'pruning old events failed; will try again');
      } finally {
        pruning = null;
      }
    })();
  }
  const stopPruning = bus.published.onAnyChange(() => {
    if (++sincePrune < PRUNE_EVERY) return;
    sincePrune = 0;
    prune();
  });

  // The next events after `after`: from the bus's memory when it holds them, else the store.
  const read = async (filter: EventFilter, after: number, limit: number): Promise<GroveEvent[]> => bus.since(after, filter, limit) ?? events.page(filter, after, limit);
  // The same for a stream, whose store reads take their turn.
  const readForStream = async (filter: EventFilter, after: number): Promise<GroveEvent[]> =>
    bus.since(after, filter, PAGE) ?? streamReads.run(() => events.page(filter, after, PAGE));

  return {
    async page(filter: EventFilter, after: number, limit: number) {
      const list = await read(filter, after, limit);
      return { events: list, next: list.length > 0 ? list[list.length - 1]!.seq : after };
    },

    // The events after `from` (`id: <seq>`, `event: <type>`), forever: woken by each publish,
    // until `signal` says the reader went.
    async *follow(filter: EventFilter, from: number, signal: AbortSignal): AsyncGenerator<StreamEvent> {
      let after = from;
      const wake = wakeOn(signal, (poke) => [bus.published.onAnyChange(poke)]);
      try {
        while (!signal.aborted) {
          wake.reset();
          const list = await readForStream(filter, after);
          for (const e of list) {
            after = e.seq;
            yield { event: e.type, data: e, id: e.seq };
          }
          if (list.length < PAGE) await wake.wait();
        }
      } finally {
        wake.stop();
      }
    },

    // A reader too slow to take the events is dropped with `event: end`, and told where to resume.
    stall(from: number) {
      return {
        ms: stallMs,
        last: (lastId: number | undefined): StreamEvent => ({
          event: 'end',
          data: { reason: 'too_slow', detail: `the client took nothing for ${stallMs / 1000} s; resume with Last-Event-ID`, after: lastId ?? from },
        }),
      };
    },

    close: once(async () => {
      stopPruning();
    }),
  };
}

export type EventFeed = ReturnType<typeof createEventFeed>;
