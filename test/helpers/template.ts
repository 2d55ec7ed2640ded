import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { initStoreDir, pgdataDir } from '../../daemon/store/db.ts';

const root = path.resolve(import.meta.dirname, '..', '..');

// One initialised PGlite folder per machine and store version; initdb takes seconds, a copy does not.
function templateDir(): string {
  const h = createHash('sha256');
  h.update(readFileSync(path.join(root, 'node_modules/@electric-sql/pglite/package.json')));
  h.update(readFileSync(path.join(root, 'daemon/store/pglite-options.ts')));
  h.update(readFileSync(path.join(root, 'daemon/store/init-child.ts')));
  return path.join(tmpdir(), `grove-test-template-${h.digest('hex').slice(0, 12)}`);
}

let ready: Promise<string> | null = null;

async function ensureTemplate(): Promise<string> {
  const dir = templateDir();
  if (existsSync(path.join(dir, 'PG_VERSION'))) return dir;
  const mine = `${dir}.${process.pid}`;
  await initStoreDir(mine);
  try {
    renameSync(mine, dir);
  } catch {
    rmSync(mine, { recursive: true, force: true }); // another test process made it first
  }
  return dir;
}

// Gives `dataDir` a fresh store copied from the template.
export async function seedStore(dataDir: string): Promise<void> {
  ready ??= ensureTemplate();
  const tpl = await ready;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await cp(tpl, pgdataDir(dataDir), { recursive: true });
}
