import type { GroveEvent } from '../../schemas/event.ts';
import type { Logger } from '../runtime/log.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import { once } from '../runtime/once.ts';
import type { EventsTable } from '../store/events.ts';
import type { Store } from '../store/store.ts';
import type { EventBus } from './bus.ts';

// The channel a daemon notifies after each commit that recorded events.
export const EVENTS_CHANNEL = 'grove_events';
// The fallback when a notification is missed: a notification only wakes (DESIGN §14.2).
const POLL_MS = 1000;
const PAGE = 1000;

// On a shared store the bus is fed from the store (DESIGN §14.2 "One team stream"): every host's
// events, read after the bus's newest, in seq order. Events commit in seq order (events.ts), so
// nothing read past is ever filled in later. This daemon's commits wake the reader like any
// other host's, rather than publishing themselves: the bus never gets a local event before an
// earlier remote one.
export function createTeamReader(deps: { bus: EventBus; events: EventsTable; store: Pick<Store, 'listen' | 'notify'>; log: Logger; pollMs?: number }) {
  const { bus, store, log } = deps;
  // Those whose commit waits until the bus has its events (so a read after the answer sees them).
  const waiters = new Set<{ seq: number; done: () => void }>();
  let failing = false;
  let closed = false;

  const settle = (all: boolean) => {
    for (const w of waiters) {
      if (!all && bus.newest() < w.seq) continue;
      waiters.delete(w);
      w.done();
    }
  };

  // One read at a time; a wake during one makes one more.
  const reader = createCoalescer<void>(async () => {
    try {
      for (;;) {
        const list = await deps.events.page({}, bus.newest(), PAGE);
        if (closed) return;
        if (list.length > 0) bus.publish(list);
        settle(false);
        if (list.length < PAGE) break;
      }
      if (failing) log.info('reading the team stream again');
      failing = false;
    } catch (err) {
      // Logged once per outage; the poll tries again. A commit waits for none of it.
      if (!failing) log.warn({ err }, 'reading the team stream failed; trying again');
      failing = true;
      settle(true);
    }
  });
  const wake = (): void => void reader.run();

  const stopListening = store.listen(EVENTS_CHANNEL, wake);
  const poll = setInterval(wake, deps.pollMs ?? POLL_MS);
  poll.unref();
  wake();

  return {
    // After this daemon's commit of `events`: every daemon is told, and the commit's caller waits
    // until this bus has them.
    async recorded(events: GroveEvent[]): Promise<void> {
      const seq = events.at(-1)!.seq;
      store.notify(EVENTS_CHANNEL, String(seq)).catch((err: unknown) => log.debug({ err }, 'notifying the team of events failed; their poll reads them'));
      if (closed || bus.newest() >= seq) return;
      await new Promise<void>((done) => {
        waiters.add({ seq, done });
        wake();
      });
    },

    close: once(async () => {
      closed = true;
      stopListening();
      clearInterval(poll);
      settle(true);
      await reader.close();
    }),
  };
}

export type TeamReader = ReturnType<typeof createTeamReader>;
