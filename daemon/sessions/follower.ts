import { closeSync, existsSync, openSync, readFileSync, readSync, watch, type FSWatcher } from 'node:fs';
import type { Limiter } from '../runtime/limiter.ts';
import { LineSplitter } from './lines.ts';
import type { Logger } from '../runtime/log.ts';
import type { SessionRecord, SessionsTable } from '../store/sessions.ts';
import type { SessionStatus } from '../../schemas/session.ts';
import type { SessionFiles } from './wrapper.ts';

// How much of one output file is read per round: memory per session stays bounded by this,
// however much the agent prints, because the next round waits for the store.
const CHUNK = 256 * 1024;

type Stream = 'stdout' | 'stderr';

interface Batch {
  streams: Stream[];
  texts: string[];
  at: string;
}

function newBatch(): Batch {
  return { streams: [], texts: [], at: new Date().toISOString() };
}

interface StreamState {
  path: string;
  fd: number | null;
  /** how far the file has been read */
  pos: number;
  splitter: LineSplitter;
}

export interface Follower {
  /** reads whatever is new (coalesced: one pump at a time, another after it if asked) */
  poke(): void;
  /** reads to the end of both files, stores the last partial lines, and records the end */
  finish(outcome: { status?: SessionStatus; exitCode?: number | null }): Promise<void>;
  readonly ended: boolean;
  /** stops following (daemon shutdown): waits for a round being stored, then lets go of the files */
  stop(): Promise<void>;
}

// After a failed store (a full disk), the first retry waits this long, doubling up to the max.
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 4000;

// Follows a session's output files from the stored offsets into the store, and records its end.
export function createFollower(
  rec: SessionRecord,
  deps: { files: SessionFiles; sessions: SessionsTable; rounds: Limiter; log: Logger; onProgress: () => void; onEnd: () => void },
): Follower {
  const { files, sessions, log } = deps;
  const streams: Record<Stream, StreamState> = {
    stdout: { path: files.stdout, fd: null, pos: rec.stdout_offset, splitter: new LineSplitter() },
    stderr: { path: files.stderr, fd: null, pos: rec.stderr_offset, splitter: new LineSplitter() },
  };
  let nextSeq = rec.next_seq;
  let chain: Promise<void> = Promise.resolve();
  let queued = false;
  let ended = false;
  let finishing: Promise<void> | null = null;
  let watcher: FSWatcher | null = null;
  const buf = Buffer.allocUnsafe(CHUNK);

  function readRound(batch: Batch): boolean {
    let progressed = false;
    for (const name of ['stdout', 'stderr'] as const) {
      const s = streams[name];
      if (s.fd === null) {
        if (!existsSync(s.path)) continue;
        s.fd = openSync(s.path, 'r');
      }
      const n = readSync(s.fd, buf, 0, CHUNK, s.pos);
      if (n <= 0) continue;
      s.pos += n;
      progressed = true;
      for (const text of s.splitter.push(buf.subarray(0, n))) {
        batch.streams.push(name);
        batch.texts.push(text);
      }
    }
    return progressed;
  }

  // What the store holds: after a failed write (a full disk) reading starts again from here,
  // so no line is skipped and none is stored twice.
  let stored = { stdout: rec.stdout_offset, stderr: rec.stderr_offset };

  async function store(batch: Batch, final: boolean): Promise<void> {
    const offsets = {
      stdout: streams.stdout.pos - (final ? 0 : streams.stdout.splitter.pendingBytes),
      stderr: streams.stderr.pos - (final ? 0 : streams.stderr.splitter.pendingBytes),
    };
    try {
      await sessions.appendLines(rec.id, nextSeq, batch, offsets);
    } catch (err) {
      for (const name of ['stdout', 'stderr'] as const) {
        streams[name].pos = stored[name];
        streams[name].splitter = new LineSplitter();
      }
      throw err;
    }
    stored = offsets;
    nextSeq += batch.texts.length;
    if (batch.texts.length > 0) deps.onProgress();
  }

  async function pump(): Promise<void> {
    for (;;) {
      // A round is read only when it may be stored at once: the store takes one at a time, so
      // rounds of many sessions waiting in its queue would only hold their lines in memory.
      const more = await deps.rounds.run(async () => {
        const batch = newBatch();
        if (!readRound(batch)) return false;
        await store(batch, false);
        return true;
      });
      if (!more) return;
      // Reading and splitting a round is this thread's work: let requests in between rounds.
      await new Promise((r) => setImmediate(r));
    }
  }

  let stopped = false;
  // A failed write is tried again later: the agent may be quiet, so no file event would come.
  let retryMs = RETRY_MIN_MS;
  let retryTimer: NodeJS.Timeout | null = null;

  // Every read-and-store runs on this one chain: two rounds in flight at once would number
  // their lines from the same seq and rewind each other's offsets.
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn);
    chain = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  function poke(): void {
    if (queued || ended || stopped) return;
    queued = true;
    serial(() => {
      queued = false;
      return pump();
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

  try {
    watcher = watch(files.dir, () => poke());
    watcher.on('error', () => {});
  } catch (err) {
    log.warn({ err, session: rec.id }, 'cannot watch session folder');
  }
  poke();

  function closeFiles(): void {
    watcher?.close();
    watcher = null;
    for (const s of Object.values(streams)) {
      if (s.fd !== null) closeSync(s.fd);
      s.fd = null;
    }
  }

  return {
    poke,
    get ended() {
      return ended;
    },
    finish(outcome) {
      // After stop() the next daemon finishes the session from its files.
      if (stopped && !finishing) return Promise.resolve();
      finishing ??= (async () => {
        for (let delay = RETRY_MIN_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
          try {
            await serial(async () => {
              await pump();
              const tail = newBatch();
              for (const name of ['stdout', 'stderr'] as const) {
                for (const text of streams[name].splitter.end()) {
                  tail.streams.push(name);
                  tail.texts.push(text);
                }
              }
              await store(tail, true);
              // Safe to repeat: after the tail is stored, another round reads and stores nothing.
              let status = outcome.status;
              let exitCode = outcome.exitCode ?? null;
              if (status === undefined) {
                const recorded = readExit(files.exit);
                if (recorded === null) status = 'lost';
                else {
                  exitCode = recorded;
                  status = recorded === 0 ? 'exited' : 'failed';
                }
              }
              await sessions.end(rec.id, status, exitCode);
              ended = true;
              closeFiles();
              log.info({ session: rec.id, status, exit_code: exitCode, lines: nextSeq - 1 }, 'session ended');
            });
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
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      await chain;
      closeFiles();
    },
  };
}

// The exit status the wrapper recorded, or null when it recorded none.
export function readExit(file: string): number | null {
  try {
    const v = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(v) ? v : null;
  } catch {
    return null;
  }
}
