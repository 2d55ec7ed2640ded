import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { openStore, pgdataDir } from '../../daemon/store/db.ts';
import { MIGRATIONS_DIR } from '../../daemon/store/migrations.ts';

const root = path.resolve(import.meta.dirname, '..', '..');

// One PGlite folder per machine and store version, initialised and migrated: initdb and the
// migrations take a while at every daemon's start, a copy does not.
function templateDir(): string {
  const h = createHash('sha256');
  h.update(readFileSync(path.join(root, 'node_modules/@electric-sql/pglite/package.json')));
  h.update(readFileSync(path.join(root, 'daemon/store/pglite-options.ts')));
  h.update(readFileSync(path.join(root, 'daemon/store/init-child.ts')));
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) h.update(file).update(readFileSync(path.join(MIGRATIONS_DIR, file)));
  return path.join(tmpdir(), `grove-test-template-${h.digest('hex').slice(0, 12)}`);
}

let ready: Promise<string> | null = null;

async function ensureTemplate(): Promise<string> {
  const dir = templateDir();
  if (existsSync(path.join(dir, 'PG_VERSION'))) return dir;
  // A data folder of its own, opened once as a daemon's first start does: initdb, every migration.
  const mine = `${dir}.${process.pid}`;
  rmSync(mine, { recursive: true, force: true });
  await mkdir(mine, { recursive: true, mode: 0o700 });
  const store = await openStore({ dataDir: mine, log: pino({ level: 'silent' }) });
  await store.close();
  try {
    renameSync(pgdataDir(mine), dir);
  } catch {
    // another test process made it first
  }
  rmSync(mine, { recursive: true, force: true });
  return dir;
}

// Gives `dataDir` a fresh store copied from the template.
export async function seedStore(dataDir: string): Promise<void> {
  ready ??= ensureTemplate();
  const tpl = await ready;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await cp(tpl, pgdataDir(dataDir), { recursive: true });
}
