import { createLimiter } from '../runtime/limiter.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { Signal } from '../runtime/signal.ts';
import type { OutputReader } from '../agents/dialects.ts';
import type { TurnRef } from '../../schemas/session.ts';
import type { NewSession, SessionRecord, SessionsTable } from '../store/sessions.ts';
import { createPump, type Pump } from './pump.ts';
import { stillRuns } from './record.ts';
import type { TranscriptSource } from './transcript.ts';
import { sessionFiles } from './wrapper.ts';

// A session whose exit nothing reports is looked at every second.
const LIVENESS_MS = 1000;

// A session this daemon follows: its pump, the liveness check of a re-attached one, a kill under way.
export interface LiveSession {
  pump: Pump;
  timer: NodeJS.Timeout | null;
  /** fires at the session's deadline (timeout_s) */
  deadline: NodeJS.Timeout | null;
  killing: Promise<void> | null;
}

// What following a session needs beyond the store: how to read its agent's output, what to
// queue after a usage limit, and the wake-ups it fires.
export interface LiveDeps {
  sessions: SessionsTable;
  signals: SessionSignals;
  dataDir: string;
  log: Logger;
  readerOf: (agent: string) => OutputReader | null;
  /** a terminal session's agent transcript (DESIGN §21), whose place is recorded in `file` */
  transcriptOf: (agent: string, file: string) => TranscriptSource | null;
  followUp: (rec: SessionRecord, resetsAt: string) => NewSession | null;
  /** an agent session's end records its task's turn (DESIGN §17) */
  checkpoint: (rec: SessionRecord) => Promise<TurnRef | null>;
}

// A session's wake-ups, by id. `output`: lines were stored, or it runs (output streams read on).
// `ended`: its end is stored (its streams end, its conversation may go on). `deadline`: it ran
// past its timeout_s (it is killed).
export interface SessionSignals {
  output: Signal<string>;
  ended: Signal<string>;
  deadline: Signal<string>;
}

// The sessions this daemon follows, by id, from their start (or re-attach) until their end is stored.
export function createLive(deps: LiveDeps) {
  const entries = new Map<string, LiveSession>();
  // Output rounds of all sessions, one at a time: a request waits behind at most one round in the
  // store's queue, not behind every busy session's.
  const rounds = createLimiter(1);
  const { output, ended, deadline } = deps.signals;

  return {
    // A session's end is stored (by the pump, a kill of a queued one, a cancelled follow-up).
    ended: (id: string) => ended.changed(id),

    get: (id: string): LiveSession | undefined => entries.get(id),

    // Starts pumping a session's output into the store; it leaves the registry once its end is stored.
    follow(rec: SessionRecord): LiveSession {
      const files = sessionFiles(deps.dataDir, rec.id);
      const agentOf = rec.kind === 'agent' ? rec.agent : null;
      const entry: LiveSession = {
        pump: createPump(rec, {
          files,
          sessions: deps.sessions,
          rounds,
          log: deps.log,
          // A terminal session's output is its screen, not the agent's structured stream.
          reader: agentOf !== null && rec.interface === 'headless' ? deps.readerOf(agentOf) : null,
          transcript: agentOf !== null && rec.interface === 'terminal' ? deps.transcriptOf(agentOf, files.transcript) : null,
          followUp: deps.followUp,
          checkpoint: deps.checkpoint,
          onProgress: () => output.changed(rec.id),
          onEnd: () => {
            const e = entries.get(rec.id);
            if (e) clearTimers(e);
            entries.delete(rec.id);
            ended.changed(rec.id);
          },
        }),
        timer: null,
        deadline: null,
        killing: null,
      };
      // Armed again by a daemon that re-attaches: the deadline is stored, not the delay.
      if (rec.deadline !== null) {
        entry.deadline = setTimeout(() => deadline.changed(rec.id), Math.max(0, Date.parse(rec.deadline) - Date.now()));
        entry.deadline.unref();
      }
      entries.set(rec.id, entry);
      return entry;
    },

    // A followed session whose exit nothing reports (re-attached: not our child; or its spawner
    // gone): its end is stored once its recorded process no longer runs.
    watch(rec: SessionRecord): void {
      const entry = entries.get(rec.id);
      if (!entry || entry.timer) return;
      const timer = setInterval(() => {
        if (stillRuns(rec)) return;
        clearInterval(timer);
        entry.timer = null;
        if (!entry.killing) void entry.pump.finish({});
      }, LIVENESS_MS);
      timer.unref();
      entry.timer = timer;
    },

    // The daemon stops following; the agents keep running (DESIGN §5).
    close: once(async () => {
      for (const entry of entries.values()) {
        clearTimers(entry);
        if (entry.killing) await entry.killing.catch(() => {});
        await entry.pump.close();
      }
      entries.clear();
    }),
  };
}

function clearTimers(entry: LiveSession): void {
  if (entry.timer) clearInterval(entry.timer);
  if (entry.deadline) clearTimeout(entry.deadline);
  entry.timer = null;
  entry.deadline = null;
}

// What start, kill and re-attach share.
export type Live = ReturnType<typeof createLive>;
