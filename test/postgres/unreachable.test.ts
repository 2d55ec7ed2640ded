// A store that cannot be reached at start (DESIGN §14.2): the daemon exits 75 with the reason,
// on stderr and in its log, and the URL's password is in neither.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { makeHome, spawnDaemon, startDaemon, stopProcess } from '../helpers/daemon.ts';
import { freshDatabase, postgresServer } from '../helpers/postgres.ts';

const PASSWORD = 'Sekr1t-pa55word';

// A loopback port nothing listens on: bound, then closed.
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function startFails(t: test.TestContext, env: Record<string, string>, config?: object) {
  const home = makeHome(t);
  if (config) writeFileSync(path.join(home, 'config.json'), JSON.stringify(config));
  const d = spawnDaemon(home, env);
  t.after(() => stopProcess(d.proc, d.exited));
  // A daemon that starts anyway has not refused the store: that ends the wait too.
  const code = await Promise.race([d.exited, d.ready.then(() => 'ready' as const)]);
  const logged = d.logs.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');
  assert.equal(d.logs.some((l) => l?.msg === 'grove daemon ready'), false);
  return { code, stderr: d.stderr(), logged, home };
}

function noPassword(r: { stderr: string; logged: string }, password = PASSWORD) {
  assert.ok(!r.stderr.includes(password), `no password on stderr: ${r.stderr}`);
  assert.ok(!r.logged.includes(password), 'no password in the log');
}

test('a closed port: exit 75, "cannot reach the store" with the refusal, the URL shown without its password', async (t) => {
  const port = await closedPort();
  const r = await startFails(t, { GROVE_DATABASE_URL: `postgresql://grove:${PASSWORD}@127.0.0.1:${port}/grove` });
  assert.equal(r.code, 75, r.stderr);
  assert.match(r.stderr, new RegExp(`^grove: cannot reach the store at postgresql://grove:\\*\\*\\*@127\\.0\\.0\\.1:${port}/grove: .*ECONNREFUSED`, 'm'));
  assert.match(r.logged, /cannot reach the store/);
  noPassword(r);
  // The lock was taken before the store was tried, with the daemon's other parts loading meanwhile.
  assert.ok(!existsSync(path.join(r.home, 'data', 'grove.lock')), 'lock released');
  assert.ok(!existsSync(path.join(r.home, 'grove.sock')), 'no socket');
});

test('the same from the user config: database_url', async (t) => {
  const port = await closedPort();
  const r = await startFails(t, {}, { database_url: `postgres://u:${PASSWORD}@127.0.0.1:${port}/x` });
  assert.equal(r.code, 75, r.stderr);
  assert.match(r.stderr, /cannot reach the store at postgres:\/\/u:\*\*\*@127\.0\.0\.1:\d+\/x: .*ECONNREFUSED/);
  noPassword(r);
});

test('a database that does not exist, and a wrong password: exit 75 with the server\'s reason', async (t) => {
  const server = await postgresServer();
  const noDb = await startFails(t, { GROVE_DATABASE_URL: server.url('no_such_db') });
  assert.equal(noDb.code, 75, noDb.stderr);
  assert.match(noDb.stderr, /cannot reach the store at .*: database "no_such_db" does not exist/);
  noPassword(noDb, server.password);

  const wrong = await startFails(t, { GROVE_DATABASE_URL: `postgresql://grove:${PASSWORD}@127.0.0.1:${server.port}/postgres` });
  assert.equal(wrong.code, 75, wrong.stderr);
  assert.match(wrong.stderr, /password authentication failed for user "grove"/);
  noPassword(wrong);
});

test('GROVE_DATABASE_URL that is not a postgres URL: exit 78 naming the variable, not its value', async (t) => {
  const r = await startFails(t, { GROVE_DATABASE_URL: `mysql://grove:${PASSWORD}@127.0.0.1/x` });
  assert.equal(r.code, 78, r.stderr);
  assert.match(r.stderr, /GROVE_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
  noPassword(r);
});

test('a daemon on PostgreSQL says where its store is without the password, and keeps nothing in PGlite', async (t) => {
  const url = await freshDatabase();
  const server = await postgresServer();
  const d = await startDaemon(t, { env: { GROVE_DATABASE_URL: url }, noSeed: true });
  const opened = await d.waitForLog((l) => l?.msg === 'store opened on PostgreSQL');
  assert.equal(opened.store, url.replace(server.password, '***'));
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
  assert.equal(await d.stop(), 0);
  noPassword({ stderr: d.stderr(), logged: d.logs.map((l) => JSON.stringify(l)).join('\n') }, server.password);
  assert.equal(existsSync(path.join(d.home, 'data', 'pgdata')), false, 'no PGlite folder made');
});
