import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

// Every test file below test/ (but the real agent CLIs', the Node 24 smoke test and the
// PostgreSQL store's and the team's, which have scripts of their own) is run by `npm test`: its folder's glob is
// on the test line, which lists each folder because npm's sh has no brace expansion.
test('npm test runs every test folder; the real agents, the smoke test and the PostgreSQL tests run by their own scripts', () => {
  const scripts = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const globs = new Set(scripts.test!.split(/\s+/).filter((w) => w.startsWith('test/')));
  const folders = new Set(
    (readdirSync(path.join(repo, 'test'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => path.posix.join('test', path.dirname(f).split(path.sep).join('/'))),
  );
  const own = new Set(['test/real-agents', 'test/smoke', 'test/postgres', 'test/team']);
  const missing = [...folders].filter((d) => !own.has(d) && !globs.has(`${d}/*.test.ts`));
  assert.deepEqual(missing, [], 'folders npm test does not run');
  const stale = [...globs].filter((g) => !folders.has(path.posix.dirname(g)));
  assert.deepEqual(stale, [], 'globs that match nothing (sh would pass them on as they are)');
  for (const d of own) assert.ok(!globs.has(`${d}/*.test.ts`), `${d} has its own script`);
  assert.match(scripts['test:agents']!, / test\/real-agents\/\*\.test\.ts$/);
  assert.match(scripts['test:smoke']!, / test\/smoke\/\*\.test\.ts$/);
});

// `npm run test:postgres` runs again on PostgreSQL (DESIGN §14.2) the PostgreSQL and team tests,
// every test of a module on the store (it opens one in-process: a new such file is in by its
// folder), and of the daemon-level tests those whose answers the store decides, named one by one
// (docs/decisions/tests.md): the others drive git, processes, HTTP or a client, as on PGlite.
test('npm run test:postgres runs every module test on the store by its folder, and daemon tests named one by one', () => {
  const scripts = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const line = scripts['test:postgres']!;
  assert.match(line, /GROVE_TEST_POSTGRES=1 node /);
  const args = line.split(/\s+/).filter((w) => w.startsWith('test/'));
  const globs = new Set(args.filter((w) => w.endsWith('/*.test.ts')).map((w) => path.posix.dirname(w)));
  const named = args.filter((w) => !w.endsWith('/*.test.ts'));
  const files = (readdirSync(path.join(repo, 'test'), { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts')).map((f) => path.posix.join('test', f.split(path.sep).join('/')));
  const source = (f: string) => readFileSync(path.join(repo, f), 'utf8');
  const onStore = files.filter((f) => /\b(openTestStore|taskParts)\(/.test(source(f)) && !/^test\/(real-agents|smoke)\//.test(f));
  assert.deepEqual(onStore.filter((f) => !globs.has(path.posix.dirname(f))).sort(), [], 'modules on the store whose folder test:postgres does not run');
  for (const d of ['test/postgres', 'test/team']) assert.ok(globs.has(d), `${d} runs`);
  for (const d of globs) assert.ok(files.some((f) => path.posix.dirname(f) === d), `${d}/*.test.ts matches nothing`);
  for (const f of named) {
    assert.ok(files.includes(f), `${f} does not exist`);
    assert.ok(!globs.has(path.posix.dirname(f)), `${f} is run twice`);
    assert.match(source(f), /\b(startDaemon|spawnDaemon|sharedDaemon|sharedAgentDaemon|readyTask)\(/, `${f} starts no daemon: it would run as on PGlite`);
  }
});
