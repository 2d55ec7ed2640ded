import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { createRegistry } from '../runtime/registry.ts';
import type { Listen } from '../runtime/signal.ts';
import type { Store } from './store.ts';

// The fallback when a notification is missed: a notification only wakes (DESIGN §14.2).
const POLL_MS = 1000;

// Wake-ups by key (a session's id...) that cross daemons on a shared store: `tell(key)` after a
// change to it has committed, and whoever `watch`es that key on any daemon of the store reads
// again, woken by the notification on `channel` or, should it be missed, by a poll. On this
// daemon's own store (PGlite) nothing else writes: both do nothing, in-process signals suffice.
// `tellOn`: this daemon's signals of such changes (by key), told to the team as they fire.
export function createTeamWakes(deps: { store: Pick<Store, 'shared' | 'listen' | 'notify'>; channel: string; tellOn?: Array<Listen<string>>; log: Logger; pollMs?: number }) {
  const { store, channel, log } = deps;
  const byKey = createRegistry<string, () => void>();
  const pokeAll = () => {
    for (const poke of byKey.all()) poke();
  };
  let stopListening = () => {};
  let poll: NodeJS.Timeout | null = null;
  const stopTelling: Array<() => void> = [];
  if (store.shared) {
    // null: notifications may have been missed while the listening connection was away.
    stopListening = store.listen(channel, (key) => {
      if (key === null) return pokeAll();
      for (const poke of byKey.get(key)) poke();
    });
    poll = setInterval(pokeAll, deps.pollMs ?? POLL_MS);
    poll.unref();
    for (const signal of deps.tellOn ?? []) stopTelling.push(signal.onAnyChange(tell));
  }

  function tell(key: string): void {
    if (!store.shared) return;
    store.notify(channel, key).catch((err: unknown) => log.debug({ err, channel, key }, 'notifying the team failed; its poll reads it'));
  }

  return {
    /** calls `poke` when `key` may have changed on any daemon; returns what stops it */
    watch(key: string, poke: () => void): () => void {
      if (!store.shared) return () => {};
      return byKey.add(key, poke);
    },

    /** after a change to `key` has committed: every daemon's watchers of it read again */
    tell,

    close: once(async () => {
      for (const stop of stopTelling) stop();
      stopListening();
      if (poll) clearInterval(poll);
      byKey.clear();
    }),
  };
}

export type TeamWakes = ReturnType<typeof createTeamWakes>;
