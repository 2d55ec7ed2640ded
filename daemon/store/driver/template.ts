// The prepared store: a PGlite folder initialised and migrated once, at the build (`npm run build`,
// run by `npm ci`), that a daemon's first start copies instead of running initdb, which takes
// seconds. It is used only while it was made by this PGlite with these settings and migrations
// (its `key`).
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { built, ROOT } from '../../runtime/root.ts';
import { MIGRATIONS_DIR, pendingMigrations } from './migrations.ts';
import { PGLITE_CONF } from './pglite-options.ts';

// The prepared store's data folder (its `pgdata` inside, as a daemon's).
export const TEMPLATE_DATA_DIR = built('store-template');
export const KEY_FILE = 'key';
// How create.ts's prepareTemplate makes it beyond initdb and the migrations: a new recipe makes
// it again.
const RECIPE = 'template databases dropped';

// What a prepared folder must have been made with to be copied: PGlite's version and settings,
// and the migrations (a build after a new one makes the folder again, so a first start has
// none left to apply).
export function templateKey(): string {
  const pkg = path.join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json');
  const version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
  const h = createHash('sha256').update(version).update(JSON.stringify(PGLITE_CONF)).update(RECIPE);
  for (const m of pendingMigrations(MIGRATIONS_DIR, [])) h.update(m.file).update(m.sql);
  return h.digest('hex').slice(0, 16);
}

// The prepared `pgdata` in `dataDir`, or null when there is none made with this PGlite.
export function usableTemplate(dataDir: string): string | null {
  try {
    if (readFileSync(path.join(dataDir, KEY_FILE), 'utf8').trim() !== templateKey()) return null;
  } catch {
    return null;
  }
  const pgdata = path.join(dataDir, 'pgdata');
  return existsSync(path.join(pgdata, 'PG_VERSION')) ? pgdata : null;
}

// Copies a prepared `pgdata` to `dest` whole or not at all: a crash mid-copy leaves no folder
// that looks like a store.
export function copyTemplate(from: string, dest: string): void {
  const tmp = `${dest}.copy-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    cpSync(from, tmp, { recursive: true });
    renameSync(tmp, dest);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}
