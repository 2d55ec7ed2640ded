import type { GroveEvent } from '../../schemas/event.ts';
import { createSignal, type Listen } from '../runtime/signal.ts';
import { matches, type EventFilter } from '../store/events.ts';

// How many of the newest events are kept in memory for followers.
const TAIL = 4096;

// Committed events, in seq order, to whoever follows them (event streams, hooks). The newest are
// kept in memory, so that a hundred followers of a burst read it here rather than each asking
// the store; older ones come from the store.
export function createEventBus() {
  // After each commit that recorded events, with the newest seq: event streams read on, pruning counts.
  const published = createSignal<number>();
  // With each committed event, in seq order: the hooks run on it.
  const committed = createSignal<GroveEvent>();
  const tail: GroveEvent[] = [];
  // Every event after this seq is in `tail` (it starts at the store's newest when the daemon starts).
  let coveredAfter = Number.MAX_SAFE_INTEGER;
  let newest = 0;

  return {
    published: published as Listen<number>,
    committed: committed as Listen<GroveEvent>,

    // Called once at start with the store's newest seq: everything after it will pass through here.
    begin(lastSeq: number): void {
      coveredAfter = lastSeq;
      newest = lastSeq;
    },

    // The seq of the newest event published: a client that loads the state and then follows the
    // events after it misses no change.
    newest(): number {
      return newest;
    },

    publish(events: GroveEvent[]): void {
      tail.push(...events);
      newest = Math.max(newest, events.at(-1)?.seq ?? 0);
      if (tail.length > TAIL) coveredAfter = tail.splice(0, tail.length - TAIL).at(-1)!.seq;
      published.changed(newest);
      for (const e of events) committed.changed(e);
    },

    // The events after `after` that match, from memory; null when memory may not hold them all.
    since(after: number, filter: EventFilter, limit: number): GroveEvent[] | null {
      if (after < coveredAfter) return null;
      let lo = 0;
      let hi = tail.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (tail[mid]!.seq <= after) lo = mid + 1;
        else hi = mid;
      }
      const out: GroveEvent[] = [];
      for (let i = lo; i < tail.length && out.length < limit; i++) if (matches(tail[i]!, filter)) out.push(tail[i]!);
      return out;
    },
  };
}

export type EventBus = ReturnType<typeof createEventBus>;
