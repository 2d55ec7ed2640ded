// The prepared store (daemon/store/driver/template.ts): made once with every migration applied, copied
// at a first start, never used when made by another PGlite or half made; without it the first
// start runs initdb as before.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { MIGRATIONS_DIR } from '../../../daemon/store/driver/migrations.ts';
import { openPgliteStore } from '../../../daemon/store/driver/pglite.ts';
import { prepareTemplate } from '../../../daemon/store/driver/create.ts';
import { TEMPLATE_DATA_DIR, templateKey, usableTemplate } from '../../../daemon/store/driver/template.ts';
import { memoryLog } from '../../helpers/store.ts';

function tempDir(t: { after(fn: () => unknown): void }): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-tpl-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const migrations = () => readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).length;

test('the build prepared a store of this PGlite with every migration applied', async (t) => {
  const prepared = usableTemplate(TEMPLATE_DATA_DIR);
  assert.ok(prepared, 'npm run build made dist/store-template');
  // A first start from it: copied, announced, nothing left to migrate.
  const home = tempDir(t);
  const { log, records } = memoryLog();
  const store = await openPgliteStore({ dataDir: path.join(home, 'data'), log });
  t.after(() => store.close());
  const { rows } = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
  assert.equal(rows[0]!.n, migrations());
  assert.ok(records.some((r) => r.msg === 'first start: creating the store from the prepared one'));
  assert.ok(!records.some((r) => r.migration), 'no migration ran at the first start');
  assert.equal(statSync(path.join(home, 'data')).mode & 0o777, 0o700);
  // Without the template databases (grove creates none): a first start copies a third of the files.
  const { rows: dbs } = await store.db.query<{ datname: string }>('SELECT datname FROM pg_database');
  assert.deepEqual(dbs.map((r) => r.datname), ['postgres']);
  assert.equal(readdirSync(path.join(home, 'data', 'pgdata', 'base')).length, 1);
});

test('prepareTemplate makes it once; a key of another PGlite or a missing key means none', async (t) => {
  const dir = path.join(tempDir(t), 'tpl');
  let opened = 0;
  const migrate = (dataDir: string) => {
    opened++;
    return openPgliteStore({ dataDir, log: memoryLog().log, template: null });
  };
  assert.equal(await prepareTemplate(dir, migrate), true);
  assert.equal(opened, 1);
  assert.ok(usableTemplate(dir));
  assert.equal(await prepareTemplate(dir, migrate), false, 'kept while it is this PGlite');
  assert.equal(opened, 1);
  writeFileSync(path.join(dir, 'key'), 'another-pglite\n');
  assert.equal(usableTemplate(dir), null);
  rmSync(path.join(dir, 'key'));
  assert.equal(usableTemplate(dir), null, 'a folder without its key (made halfway) is never used');
  assert.match(templateKey(), /^[0-9a-f]{16}$/);
});

test('without a prepared store the first start runs initdb and says so first', async (t) => {
  const home = tempDir(t);
  const { log, records } = memoryLog();
  const store = await openPgliteStore({ dataDir: path.join(home, 'data'), log, template: path.join(home, 'none') });
  t.after(() => store.close());
  const said = records.findIndex((r) => r.msg === 'first start: creating the store; this takes a few seconds');
  const made = records.findIndex((r) => r.msg === 'new store initialised');
  assert.ok(said >= 0 && made > said);
  assert.equal(records[made].prepared, false);
  assert.ok(records.some((r) => r.migration === '0001_projects.sql'));
  assert.ok(existsSync(path.join(home, 'data', 'pgdata', 'PG_VERSION')));
});
