// The embedded store runs PGlite in a process of its own (daemon/store/driver/pglite.ts): never
// two on one folder, none left behind by a daemon that died.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { processStartTime } from '../../../daemon/proc/stat.ts';
import { openPgliteStore } from '../../../daemon/store/driver/pglite.ts';
import { startDaemon } from '../../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../../helpers/git.ts';
import { memoryLog } from '../../helpers/store.ts';
import { marker, waitPidGone } from '../../helpers/state.ts';

test("the store is a process of the daemon's; a daemon killed with SIGKILL takes it along, and the next daemon opens the same store", async (t) => {
  const d = await startDaemon(t);
  const before = psOf(d.home);
  assert.equal(before.length, 1, 'one store process');
  assert.equal(before[0]!.ppid, d.proc.pid, "the daemon's own child");
  const made = await d.socket('POST', '/api/projects', { body: { path: makeRepo(t) } });
  assert.equal(made.status, 201, made.text);
  assert.equal(await d.stop('SIGKILL'), 'SIGKILL');
  await waitPidGone(before[0]!.pid, 10_000);
  const d2 = await startDaemon(t, { home: d.home });
  const again = await d2.socket('GET', `/api/projects/${made.json.id}`);
  assert.equal(again.status, 200, 'what the store had is there');
  assert.equal(psOf(d.home).length, 1);
  await d2.stop();
  assert.equal(psOf(d.home).length, 0, 'a daemon stopped leaves no store process');
});

test('a store process that holds the folder (a dead daemon\'s, still ending) is waited for, then ended: never two PGlites on one folder', { timeout: 60_000 }, async (t) => {
  const home = makeTempDir(t);
  const dataDir = path.join(home, 'data');
  const { log } = memoryLog();
  // A first open makes the store; closed, it leaves its lock free.
  await (await openPgliteStore({ dataDir, log, template: null })).close();
  // A live process named in the store's lock, as an orphaned store would be.
  const m = marker(t);
  const holder = spawn('sleep', [m], { stdio: 'ignore' });
  const exited = new Promise<string | null>((r) => holder.once('exit', (_c, s) => r(s)));
  writeFileSync(path.join(dataDir, 'store.lock'), JSON.stringify({ pid: holder.pid, start_time: processStartTime(holder.pid!) }) + '\n');
  const t0 = performance.now();
  const store = await openPgliteStore({ dataDir, log, template: null });
  t.after(() => store.close());
  const waited = performance.now() - t0;
  assert.equal(await exited, 'SIGKILL', 'the holder was killed');
  assert.ok(waited >= 4000, `it waited for the holder first (${Math.round(waited)} ms)`);
  const { rows } = await store.db.query<{ one: number }>('SELECT 1 AS one');
  assert.equal(rows[0]!.one, 1);
});

// The store processes of a daemon home (their command line names its pgdata): pid and parent pid.
function psOf(home: string): Array<{ pid: number; ppid: number }> {
  const pgdata = path.join(home, 'data', 'pgdata');
  const out: Array<{ pid: number; ppid: number }> = [];
  for (const line of execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' }).split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (m && !m[3]!.startsWith('Z') && m[4]!.includes(pgdata) && m[4]!.includes(path.join('store', 'driver', 'worker.js'))) out.push({ pid: Number(m[1]), ppid: Number(m[2]) });
  }
  return out;
}

test('a batch is one transaction sent whole: all of it is stored, or none of it when one statement fails (with its code); inside a transaction it runs there', async (t) => {
  const dir = makeTempDir(t);
  const store = await openPgliteStore({ dataDir: dir, log: memoryLog().log });
  t.after(() => store.close());
  await store.db.query('CREATE TABLE b (n int PRIMARY KEY)');
  await store.db.batch([
    { sql: 'INSERT INTO b VALUES ($1)', params: [1] },
    { sql: 'INSERT INTO b SELECT n + 1 FROM b', params: [] },
  ]);
  const all = async () => (await store.db.query<{ n: number }>('SELECT n FROM b ORDER BY n')).rows.map((r) => r.n);
  assert.deepEqual(await all(), [1, 2], 'the second statement saw the first');
  await assert.rejects(
    store.db.batch([
      { sql: 'INSERT INTO b VALUES ($1)', params: [3] },
      { sql: 'INSERT INTO b VALUES ($1)', params: [1] },
    ]),
    (err: Error & { code?: string }) => err.code === '23505',
  );
  assert.deepEqual(await all(), [1, 2], 'nothing of the failed batch was kept');
  await store.db.transaction(async (tx) => {
    await tx.batch([{ sql: 'INSERT INTO b VALUES ($1)', params: [4] }]);
    assert.deepEqual((await tx.query<{ n: number }>('SELECT n FROM b ORDER BY n')).rows.map((r) => r.n), [1, 2, 4]);
  });
  assert.deepEqual(await all(), [1, 2, 4]);
});
