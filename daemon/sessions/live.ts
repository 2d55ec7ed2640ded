import { EventEmitter } from 'node:events';
import { createLimiter } from '../runtime/limiter.ts';
import type { Logger } from '../runtime/log.ts';
import type { SessionRecord, SessionsTable } from '../store/sessions.ts';
import { createPump, type Pump } from './pump.ts';
import { sessionFiles } from './wrapper.ts';

// A session this daemon follows: its pump, the liveness check of a re-attached one, a kill under way.
export interface LiveSession {
  pump: Pump;
  timer: NodeJS.Timeout | null;
  killing: Promise<void> | null;
}

// The sessions this daemon follows, by id, from their start (or re-attach) until their end is stored.
export function createLive(deps: { sessions: SessionsTable; dataDir: string; log: Logger }) {
  const entries = new Map<string, LiveSession>();
  // Output rounds of all sessions, two at a time: one being stored, the next one ready.
  const rounds = createLimiter(2);
  // 'progress:<id>' when lines were stored or the session runs, 'end:<id>' when it ended: what
  // output streams wait on.
  const events = new EventEmitter();
  events.setMaxListeners(0);

  return {
    events,

    get: (id: string): LiveSession | undefined => entries.get(id),

    // Starts pumping a session's output into the store; it leaves the registry once its end is stored.
    follow(rec: SessionRecord): LiveSession {
      const entry: LiveSession = {
        pump: createPump(rec, {
          files: sessionFiles(deps.dataDir, rec.id),
          sessions: deps.sessions,
          rounds,
          log: deps.log,
          onProgress: () => events.emit(`progress:${rec.id}`),
          onEnd: () => {
            const e = entries.get(rec.id);
            if (e?.timer) clearInterval(e.timer);
            entries.delete(rec.id);
            events.emit(`end:${rec.id}`);
          },
        }),
        timer: null,
        killing: null,
      };
      entries.set(rec.id, entry);
      return entry;
    },

    // The daemon stops following; the agents keep running (DESIGN §5).
    async close(): Promise<void> {
      for (const entry of entries.values()) {
        if (entry.timer) clearInterval(entry.timer);
        if (entry.killing) await entry.killing.catch(() => {});
        await entry.pump.stop();
      }
      entries.clear();
    },
  };
}

// What start, kill and re-attach share.
export type Live = ReturnType<typeof createLive>;
