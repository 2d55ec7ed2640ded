import { createRegistry } from '../runtime/registry.ts';
import type { Notified } from './store.ts';

// The listeners of each channel of one store, and the delivery of a notification to them; each
// driver decides where notifications come from.
export function createListeners() {
  const byChannel = createRegistry<string, Notified>();
  return {
    add(channel: string, fn: Notified): () => void {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
      return byChannel.add(channel, fn);
    },
    channels: (): string[] => byChannel.keys(),
    has: (channel: string): boolean => byChannel.has(channel),
    // A listener that throws is its own failure, not the other listeners'.
    deliver(channel: string, payload: string | null): void {
      for (const fn of byChannel.get(channel)) {
        try {
          fn(payload);
        } catch {
          // the listener reports its own errors
        }
      }
    },
    // After a gap in which notifications may have been missed: every listener reads again.
    deliverAll(): void {
      for (const channel of byChannel.keys()) this.deliver(channel, null);
    },
  };
}
