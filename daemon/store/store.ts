// The one store interface, whichever driver is behind it (pglite.ts, postgres.ts; db.ts chooses).
import type { Limiter } from '../runtime/limiter.ts';
import { retryDelay, retrying, type RetryPolicy } from '../runtime/retry.ts';

// What table modules get: queries, never the driver itself. Rows have the same shapes on both
// drivers (timestamps as Date, int8 as number, json and jsonb parsed); errors carry their SQLSTATE
// as `code`. `affectedRows` counts the rows an INSERT, UPDATE or DELETE changed (0 for a SELECT).
export interface Db {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[]; affectedRows?: number }>;
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  // Statements that need no answer from one another, in one transaction sent whole: the store
  // is not held between them while this process is busy (a round of output is one).
  batch(statements: Statement[]): Promise<void>;
}

// One statement of a batch (Db.batch).
export interface Statement {
  sql: string;
  params: unknown[];
}

// `statements` one after the other on `tx`: a batch where the driver cannot send one whole (or
// inside a transaction already).
export async function runInTurn(tx: Pick<Db, 'query'>, statements: Statement[]): Promise<void> {
  for (const s of statements) await tx.query(s.sql, s.params);
}

// Called with a notification's payload, or with null when notifications may have been missed
// (the listening connection was lost and is open again): a listener then reads what it follows.
export type Notified = (payload: string | null) => void;

export interface Store {
  readonly db: Db;
  // Whether other daemons may share this store (PostgreSQL): what they write arrives only through
  // the store, so followers listen for it (DESIGN §14.2). False for this daemon's own PGlite.
  readonly shared: boolean;
  // `fn` with each notification on `channel` (a lowercase SQL identifier), from any daemon of the
  // store, until the returned function is called. A notification only wakes: it can be missed,
  // so whoever listens also reads on a timer.
  listen(channel: string, fn: Notified): () => void;
  // Sends `payload` (at most a few kilobytes) to every listener of `channel` on the store, this
  // daemon's included. Call it after the change it announces has committed.
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

// How long a timer's work that found the store unreachable waits before it tries again: no
// client asks for it again, so it would otherwise be lost until a restart.
export const STORE_RETRY_MS = 2000;
const STORE_RETRY: RetryPolicy = { delayMs: STORE_RETRY_MS };

// Runs `again` after STORE_RETRY_MS when `err` says the store could not be reached; whether it will.
export function retryWhenUnreachable(err: unknown, again: () => void): boolean {
  if (!(err instanceof StoreUnreachableError)) return false;
  setTimeout(again, retryDelay(STORE_RETRY, 1)).unref();
  return true;
}

// A limiter whose runs that find the store unreachable wait and run again until it answers: for
// the reads of open streams (output, events), which then carry on where they were rather than
// end in a way a client could take for the session's end (DESIGN §14.2).
export function patientReads(limiter: Limiter): Limiter {
  return {
    ...limiter,
    run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      // The signal is not handed on: a wait under way ends as it would, then the abort ends the tries.
      return retrying(() => limiter.run(fn, signal), { policy: STORE_RETRY, retryable: (err) => err instanceof StoreUnreachableError && !signal?.aborted });
    },
  };
}

// The store named by database_url cannot be reached: at start (refused, unknown host, bad
// credentials, no such database) the daemon exits 75 with this message; later (the server gone,
// a connection lost, a statement or connect timing out) the request answers 503
// STORE_UNAVAILABLE (DESIGN §14.2). The message never holds the URL's password.
export class StoreUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnreachableError';
  }
}
