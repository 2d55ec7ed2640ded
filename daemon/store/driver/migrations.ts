// The SQL migrations both drivers run (PGlite's worker, postgres.ts): the same files, in the
// same order, each recorded in schema_migrations in the transaction that applies it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../runtime/root.ts';

export interface Migration {
  version: number;
  file: string;
  sql: string;
}

// Read from the sources' folder: .sql files are not copied into dist/.
export const MIGRATIONS_DIR = path.join(ROOT, 'daemon', 'store', 'driver', 'migrations');

export const SCHEMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;

export const RECORD_MIGRATION = 'INSERT INTO schema_migrations (version, name) VALUES ($1, $2)';

// migrations/NNNN_name.sql in order, those not in `applied`.
export function pendingMigrations(dir: string, applied: Iterable<number>): Migration[] {
  const done = new Set(applied);
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 4)), file }))
    .filter((m) => !done.has(m.version))
    .map((m) => ({ ...m, sql: readFileSync(path.join(dir, m.file), 'utf8') }));
}
