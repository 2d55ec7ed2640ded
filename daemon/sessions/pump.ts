import { watch, type FSWatcher } from 'node:fs';
import type { Blocked, SessionStatus, TurnRef } from '../../schemas/session.ts';
import type { Limiter } from '../runtime/limiter.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { OutputReader, Reading } from '../agents/dialects.ts';
import type { NewSession, ReadingChange, SessionRecord, SessionsTable } from '../store/sessions.ts';
import { createBlockedReader } from './blocked.ts';
import type { TranscriptSource } from './transcript.ts';
import { readNew, type Offsets } from './reader.ts';
import { recordedEnd, type SessionFiles } from './wrapper.ts';

// A terminal session's transcript is read again this often while nothing else pokes its pump: an
// agent's interface may write it after its last draw (Claude Code writes a turn's answer to its
// transcript once the screen shows it, then waits quietly), and no output would come to read it.
export const TRANSCRIPT_POLL_MS = 1000;

// After a failed store (a full disk), the first retry waits this long, doubling up to the max.
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 4000;

// What the session verbs need of a session being followed.
export interface Pump {
  /** stores whatever is new (coalesced: one pass at a time, another after it if asked) */
  poke(): void;
  /** stores the rest of both files, the last partial lines included, and records the end */
  finish(outcome: Outcome): Promise<void>;
  /** stops following (daemon shutdown): waits for a round being stored, then lets go of the folder */
  close(): Promise<void>;
}

// How a session ended: given by a kill, else read from the wrapper's record.
export interface Outcome {
  status?: SessionStatus;
  exitCode?: number | null;
  timedOut?: boolean;
}

// Given, not imported: the limiter is shared by all sessions, the callbacks tell their streams.
export interface PumpDeps {
  files: SessionFiles;
  sessions: SessionsTable;
  /** shared by the pumps of all sessions */
  rounds: Limiter;
  log: Logger;
  /** reads the agent's session id, result and usage limit from its stdout; null: not parsed */
  reader: OutputReader | null;
  /** a terminal session's: reads them from the agent's transcript instead (DESIGN §21) */
  transcript: TranscriptSource | null;
  /** the follow-up to queue when the session ended at a usage limit, if any (DESIGN §8) */
  followUp: (rec: SessionRecord, resetsAt: string) => NewSession | null;
  /** an agent session's end records its task's turn (DESIGN §17); null when none was; never throws */
  checkpoint: (rec: SessionRecord) => Promise<TurnRef | null>;
  onProgress: () => void;
  onEnd: () => void;
}

// Follows a session's output files into the store from the stored offsets, and records its end.
export function createPump(rec: SessionRecord, deps: PumpDeps): Pump {
  const { files, sessions, log } = deps;
  // What the store holds. Every round reads from here and a failed write leaves it as it was, so
  // the retry reads the same lines again: no line is skipped and none is stored twice.
  let stored: Offsets = { stdout: rec.stdout_offset, stderr: rec.stderr_offset };
  let nextSeq = rec.next_seq;
  // A transcript is read from its start by every daemon: its reading is made again whole.
  let reading: Reading = deps.transcript
    ? { agent_session_id: rec.agent_session_id, result: null, limit_resets_at: null }
    : { agent_session_id: rec.agent_session_id, result: rec.agent_result, limit_resets_at: rec.limit_resets_at };

  // What the sandbox refused (DESIGN §18), read on with the output; stored until it is.
  const blocked = createBlockedReader(files.blocked, rec.result?.blocked ?? []);
  let unstoredBlocked: { all: Blocked[]; fresh: Blocked[] } | null = null;
  async function storeBlocked(): Promise<void> {
    const now = blocked.read();
    if (now) unstoredBlocked = { all: now.all, fresh: [...(unstoredBlocked?.fresh ?? []), ...now.fresh] };
    if (!unstoredBlocked) return;
    await sessions.setBlocked(rec.id, unstoredBlocked.all, unstoredBlocked.fresh);
    unstoredBlocked = null;
  }

  // After a failed write, what the store holds is read again before the next round: a write
  // whose answer was lost with the connection (PostgreSQL gone at the COMMIT) may have committed,
  // and its lines must not be stored twice.
  let unsure = false;

  // Lines and offsets in one transaction; false when nothing was new. Read only once it may be
  // stored at once: rounds waiting in the store's queue would only hold their lines in memory.
  function round(final: boolean): Promise<boolean> {
    return deps.rounds.run(async () => {
      if (unsure) {
        const row = await sessions.get(rec.id);
        if (row) {
          stored = { stdout: row.stdout_offset, stderr: row.stderr_offset };
          nextSeq = row.next_seq;
          reading = { agent_session_id: row.agent_session_id, result: row.agent_result, limit_resets_at: row.limit_resets_at };
        }
        unsure = false;
      }
      await storeBlocked();
      const { batch, offsets } = readNew(files, stored, { final });
      const moved = offsets.stdout !== stored.stdout || offsets.stderr !== stored.stderr;
      const told = deps.transcript ? await deps.transcript.peek(reading) : null;
      if (!moved && (told === null || told.reading === reading)) return false;
      const read = told ? told.reading : deps.reader ? deps.reader(reading, batch.texts.filter((_, i) => batch.streams[i] === 'stdout'), batch.at) : reading;
      const changes: ReadingChange[] = [];
      if (read.result !== reading.result) changes.push('session.result');
      if (read.limit_resets_at !== reading.limit_resets_at) changes.push('session.limit');
      try {
        await sessions.appendLines(rec.id, nextSeq, batch, offsets, read !== reading ? { value: read, changes } : undefined);
      } catch (err) {
        unsure = true;
        throw err;
      }
      stored = offsets;
      told?.advance();
      reading = read;
      nextSeq += batch.texts.length;
      if (batch.texts.length > 0) deps.onProgress();
      return true;
    });
  }

  // Rounds until nothing is new. Reading and splitting is this thread's work: requests get in
  // between rounds.
  async function drain(final: boolean): Promise<void> {
    while (await round(final)) await new Promise((r) => setImmediate(r));
  }

  // Every drain runs on this one chain: two in flight at once would read from the same offsets
  // and store the same lines twice.
  let chain: Promise<void> = Promise.resolve();
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn);
    chain = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  let queued = false;
  let ended = false;
  let stopped = false;
  let finishing: Promise<void> | null = null;
  // A failed write is tried again later: the agent may be quiet, so no file event would come.
  let retryMs = RETRY_MIN_MS;
  let retryTimer: NodeJS.Timeout | null = null;

  function poke(): void {
    if (queued || ended || stopped) return;
    queued = true;
    serial(() => {
      queued = false;
      return drain(false);
    }).then(
      () => {
        retryMs = RETRY_MIN_MS;
      },
      (err: unknown) => {
        if (finishing) return; // the end is being stored: that has its own retries
        log.error({ err, session: rec.id, retry_ms: retryMs }, 'storing session output failed; will retry');
        retryTimer ??= setTimeout(() => {
          retryTimer = null;
          poke();
        }, retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      },
    );
  }

  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(files.dir, () => poke());
    watcher.on('error', () => {});
  } catch (err) {
    log.warn({ err, session: rec.id }, 'cannot watch session folder');
  }
  // The transcript is not in the session's folder (its own agent's state), and may not exist yet.
  let transcriptPoll: NodeJS.Timeout | null = deps.transcript ? setInterval(poke, TRANSCRIPT_POLL_MS) : null;
  transcriptPoll?.unref();
  poke();

  function unwatch(): void {
    watcher?.close();
    watcher = null;
    if (transcriptPoll) clearInterval(transcriptPoll);
    transcriptPoll = null;
  }

  // Recorded once, before the end is stored: the session's end carries it, and the conversation's
  // next session cannot start on the worktree before it is taken.
  let turn: TurnRef | null | undefined;

  // Stores the rest of the output, then the end: the one given (a kill), else the wrapper's record.
  async function storeEnd(outcome: Outcome): Promise<void> {
    await drain(true);
    if (turn === undefined) turn = rec.kind === 'agent' ? await deps.checkpoint(rec) : null;
    // Safe to repeat: once the rest is stored, another drain reads and stores nothing.
    let { status, exitCode } = outcome.status !== undefined ? { status: outcome.status, exitCode: outcome.exitCode ?? null } : recordedEnd(files);
    // An agent at its usage limit has not done what it was asked, whatever its exit code.
    const resetsAt = outcome.status === undefined ? reading.limit_resets_at : null;
    if (resetsAt !== null && status === 'exited') status = 'failed';
    const followUp = resetsAt !== null ? deps.followUp(rec, resetsAt) : null;
    await sessions.end(rec.id, status, exitCode, { timedOut: outcome.timedOut === true, turn, ...(followUp ? { followUp } : {}) });
    ended = true;
    unwatch();
    log.info({ session: rec.id, status, exit_code: exitCode, lines: nextSeq - 1 }, 'session ended');
  }

  return {
    poke,
    finish(outcome) {
      // After close() the next daemon finishes the session from its files.
      if (stopped && !finishing) return Promise.resolve();
      finishing ??= (async () => {
        for (let delay = RETRY_MIN_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
          try {
            await serial(() => storeEnd(outcome));
            break;
          } catch (err) {
            if (stopped) return; // the next daemon finishes it from the files
            log.error({ err, session: rec.id, retry_ms: delay }, 'storing the end of session output failed; will retry');
            await new Promise((r) => setTimeout(r, delay));
          }
        }
        if (retryTimer) clearTimeout(retryTimer);
        deps.onEnd();
      })();
      return finishing;
    },
    close: once(async () => {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      await chain;
      unwatch();
    }),
  };
}
