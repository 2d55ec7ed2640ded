// Making a store's data folder: at a daemon's first start, in the store's process, from the
// prepared store (template.ts), else by initdb (init.ts); and the prepared store itself, at the build.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Store } from '../store.ts';
import { copyTemplate, KEY_FILE, templateKey, usableTemplate } from './template.ts';

// init.ts (and execa with it) is loaded only where initdb runs: the store's process loads this
// module at every start, and execa is most of what it would load.
const initdb = async (dir: string) => (await import('./init.ts')).initStoreDir(dir);

type Log = (obj: Record<string, unknown>, msg: string) => void;

// Whether `pgdata` holds no store yet, and then what a first start makes it from: the prepared
// store in `template` if it is usable (its `pgdata`), else null (initdb runs).
export function firstStart(pgdata: string, template: string | null): { prepared: string | null } | null {
  if (existsSync(path.join(pgdata, 'PG_VERSION'))) return null;
  return { prepared: template === null ? null : usableTemplate(template) };
}

// Says what a first start is about to do, before it does it: a first start is silent for a
// while otherwise. The daemon says it, before the store's process starts.
export function firstStartMessage(prepared: string | null): string {
  return prepared ? 'first start: creating the store from the prepared one' : 'first start: creating the store; this takes a few seconds';
}

// Makes `pgdata` unless it holds a store: a copy of `prepared` (a prepared store's `pgdata`), else
// initdb.
export async function createStoreDir(pgdata: string, prepared: string | null, log: Log): Promise<void> {
  if (existsSync(path.join(pgdata, 'PG_VERSION'))) return;
  rmSync(pgdata, { recursive: true, force: true }); // a half-made folder from a crash during initdb
  const t0 = performance.now();
  if (prepared) copyTemplate(prepared, pgdata);
  else await initdb(pgdata);
  log({ dir: pgdata, ms: Math.round(performance.now() - t0), prepared: prepared !== null }, 'new store initialised');
}

// Makes the prepared store in `dataDir` unless one made with this PGlite is there: initdb, then
// `open` (the daemon's own opening of the store, which applies the migrations), then the key,
// written last so that a half-made folder is never used. The template databases are dropped:
// grove never creates a database, and they are two thirds of the files a first start copies.
export async function prepareTemplate(dataDir: string, open: (dataDir: string) => Promise<Store>): Promise<boolean> {
  if (usableTemplate(dataDir)) return false;
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  await initdb(path.join(dataDir, 'pgdata'));
  const store = await open(dataDir);
  try {
    await store.db.query(`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`);
    for (const name of ['template0', 'template1']) await store.db.query(`DROP DATABASE ${name}`);
  } finally {
    await store.close();
  }
  writeFileSync(path.join(dataDir, KEY_FILE), `${templateKey()}\n`);
  return true;
}
