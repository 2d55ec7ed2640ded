// Messages between the daemon (pglite.ts) and the store's process (worker.ts).
import type { Statement } from '../store.ts';

// What the store's process is started with.
export interface StoreWorkerData {
  pgdata: string;
  conf: string[];
  migrations: string;
  /** at a first start, the prepared store's `pgdata` to copy (template.ts); null: initdb runs */
  prepared: string | null;
}

export type StoreRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[]; tx: number | null }
  | { id: number; op: 'batch'; statements: Statement[] }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' };

// An error crosses the process boundary as data: its SQLSTATE or errno code must survive.
export interface WireError {
  message: string;
  code: string | undefined;
}

export type StoreReply =
  | { type: 'reply'; id: number; ok: true; rows?: unknown[]; affectedRows?: number; tx?: number }
  | { type: 'reply'; id: number; ok: false; error: WireError }
  | { type: 'ready' }
  | { type: 'failed'; error: WireError }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; obj: Record<string, unknown>; msg: string };

export function fromWire(w: WireError): Error {
  return Object.assign(new Error(w.message), w.code === undefined ? {} : { code: w.code });
}
