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

// `npm run test:postgres` runs again, with every daemon and store on PostgreSQL (DESIGN §14.2),
// each folder with a test that starts a daemon or opens a store, and the PostgreSQL tests; but
// the clients of the API, named here (docs/decisions/tests.md): a new folder is in unless it is
// added to them on purpose.
const API_CLIENTS = new Set(['test/cli', 'test/mcp', 'test/ui', 'test/bridges', 'test/security']);
test('npm run test:postgres runs every folder whose tests use a daemon or a store, but the named clients of the API', () => {
  const scripts = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const line = scripts['test:postgres']!;
  assert.match(line, /GROVE_TEST_POSTGRES=1 node /);
  const globs = new Set(line.split(/\s+/).filter((w) => w.startsWith('test/')));
  const own = new Set(['test/real-agents', 'test/smoke']);
  const users = new Set(['test/postgres', 'test/team']);
  for (const f of readdirSync(path.join(repo, 'test'), { recursive: true }) as string[]) {
    if (!f.endsWith('.test.ts')) continue;
    const dir = path.posix.join('test', path.dirname(f).split(path.sep).join('/'));
    if (!own.has(dir) && !API_CLIENTS.has(dir) && /\b(startDaemon|sharedDaemon|sharedAgentDaemon|readyTask|openTestStore|taskParts)\(/.test(readFileSync(path.join(repo, 'test', f), 'utf8'))) users.add(dir);
  }
  assert.deepEqual([...users].filter((d) => !globs.has(`${d}/*.test.ts`)).sort(), [], 'folders test:postgres does not run');
  assert.deepEqual([...globs].filter((g) => !users.has(path.posix.dirname(g))).sort(), [], 'folders with no daemon or store, or clients, run on PostgreSQL');
});
