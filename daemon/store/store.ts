// The one store interface, whichever driver is behind it (pglite.ts, postgres.ts; db.ts chooses).

// What table modules get: queries, never the driver itself. Rows have the same shapes on both
// drivers (timestamps as Date, int8 as number, json and jsonb parsed); errors carry their SQLSTATE
// as `code`. `affectedRows` counts the rows an INSERT, UPDATE or DELETE changed (0 for a SELECT).
export interface Db {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[]; affectedRows?: number }>;
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
}

export interface Store {
  readonly db: Db;
  close(): Promise<void>;
}

// The store named by database_url did not answer at start (refused, unknown host, bad
// credentials, no such database): the daemon exits 75 with this message, which never holds the
// URL's password.
export class StoreUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnreachableError';
  }
}
