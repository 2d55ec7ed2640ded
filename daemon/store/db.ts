import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { execa } from 'execa';
import type { Logger } from '../log.ts';
import { PGLITE_CONF } from './pglite-options.ts';

// What table modules get: queries, never the PGlite instance itself.
export interface Db {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[]; affectedRows?: number }>;
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
}

export interface Store {
  readonly db: Db;
  close(): Promise<void>;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const INIT_CHILD = fileURLToPath(new URL('./init-child.ts', import.meta.url));

// The folder inside the data folder that holds PGlite's files.
export function pgdataDir(dataDir: string): string {
  return path.join(dataDir, 'pgdata');
}

// Makes a new, empty PGlite data folder at `dir` (initdb) in a child process, atomically.
export async function initStoreDir(dir: string): Promise<void> {
  const tmp = `${dir}.init-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const res = await execa(process.execPath, [...process.execArgv, INIT_CHILD, tmp], { reject: false, stdin: 'ignore' });
  if (res.exitCode !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`initialising the store at ${dir} failed: ${res.stderr || res.stdout || `exit ${res.exitCode}`}`);
  }
  renameSync(tmp, dir);
}

// Opens (creating if needed) the one PGlite of this daemon, migrated and answering queries.
export async function openStore(opts: { dataDir: string; log: Logger }): Promise<Store> {
  const { log } = opts;
  const dir = pgdataDir(opts.dataDir);
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    const t0 = performance.now();
    rmSync(dir, { recursive: true, force: true }); // a half-made folder from a crash during initdb
    await initStoreDir(dir);
    log.info({ dir, ms: Math.round(performance.now() - t0) }, 'new store initialised');
  }
  const pg = new PGlite({ dataDir: dir, postgresqlconf: PGLITE_CONF });
  try {
    await pg.waitReady;
    await migrate(pg, log);
    await pg.query('SELECT 1'); // readiness: the listeners open only after this answers
  } catch (err) {
    await pg.close().catch(() => {});
    throw err;
  }

  let closing: Promise<void> | null = null;
  return {
    db: wrap(pg),
    close() {
      closing ??= (async () => {
        try {
          await pg.exec('CHECKPOINT');
        } finally {
          await pg.close();
        }
        log.info('store closed');
      })();
      return closing;
    },
  };
}

function wrap(q: PGlite | Transaction): Db {
  return {
    query: (sql, params) => q.query(sql, params as unknown[]),
    transaction: (fn) => {
      if (!('transaction' in q)) throw new Error('nested transactions are not supported');
      return q.transaction((tx) => fn(wrap(tx)));
    },
  };
}

// Applies migrations/NNNN_name.sql in order, each in its own transaction, recording each.
async function migrate(pg: PGlite, log: Logger): Promise<void> {
  await pg.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied = new Set((await pg.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    if (applied.has(version)) continue;
    const sql = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
    await pg.transaction(async (tx) => {
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, file]);
    });
    log.info({ migration: file }, 'migration applied');
  }
}
