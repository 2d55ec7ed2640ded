// The store: one interface (store.ts), two drivers, chosen once at start. Nothing above this
// folder knows which one it talks to.
import type { Logger } from '../runtime/log.ts';
import { pgdataDir } from './driver/pglite-options.ts';
import { openPgliteStore } from './driver/pglite.ts';
import type { Store } from './store.ts';

export { pgdataDir };
export { StoreUnreachableError, type Db, type Statement, type Store } from './store.ts';

// PostgreSQL when `databaseUrl` is given (database_url, GROVE_DATABASE_URL), else the embedded
// PGlite in the data folder; open and migrated when it resolves. The PostgreSQL driver (and `pg`)
// is loaded only for a team's store.
export async function openStore(opts: { dataDir: string; log: Logger; databaseUrl?: string | null }): Promise<Store> {
  if (!opts.databaseUrl) return openPgliteStore(opts);
  const { openPostgresStore } = await import('./driver/postgres.ts');
  return openPostgresStore({ url: opts.databaseUrl, log: opts.log });
}
