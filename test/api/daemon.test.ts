// The daemon process itself: start, stop, restart, first start, a second daemon, its user
// config; `npm start` as the README gives it; what a removed project leaves in the store.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once as onceEvent } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { pino } from 'pino';
import { Client, request } from 'undici';
import { makeHome, ROOT, sharedDaemon, spawnDaemon, startDaemon, stopProcess } from '../helpers/daemon.ts';
import { openStore } from '../../daemon/store/db.ts';
import { makeRepo } from '../helpers/git.ts';
import { storeUrlFor } from '../helpers/postgres.ts';
import { readyTask, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { seedStore } from '../helpers/template.ts';

const EXIT_ALREADY_RUNNING = 75;
const EXIT_CONFIG = 78;
// A daemon that two tests only need running, each to check that a refused second one leaves it be.
const running = sharedDaemon();

test('SIGTERM and SIGINT shut down cleanly: exit 0, socket and lock removed, every log line written in order though its reader lags', async (t) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const d = await startDaemon(t);
    assert.ok(existsSync(d.socketPath));
    // A reader that lags (a loaded machine, a slow journal): the daemon's log queues behind a full
    // pipe, and shuts down meanwhile. Refused requests are logged with their long URLs.
    d.proc.stdout!.pause();
    const floods = 48;
    for (let i = 0; i < floods; i++) {
      const r = await request(`http://127.0.0.1:${d.port}/api/health?flood=${i}&${'x'.repeat(8000)}`, { headers: { origin: 'http://evil.example' } });
      assert.equal(r.statusCode, 403);
      await r.body.dump();
    }
    const exited = d.stop(signal);
    // The lock goes last: all is closed, and what is left to do is to write the log and exit.
    const lock = path.join(d.home, 'data', 'grove.lock');
    try {
      await until(() => !existsSync(lock), `${signal}: lock removed`, 30_000);
    } catch (err) {
      // Say how far the shutdown got: the parts it closed, from the log it could not write yet.
      d.proc.stdout!.resume();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      const last = d.logs.slice(-16).map((l) => `${l?.msg}${l?.part ? ` (${l.part})` : ''}`);
      throw new Error(`${(err as Error).message}; the daemon's last log lines: ${JSON.stringify(last)}; exited: ${d.proc.exitCode ?? d.proc.signalCode}`);
    }
    d.proc.stdout!.resume();
    assert.equal(await exited, 0, signal);
    // Its last lines may still be in the pipe when it has exited.
    if (!d.proc.stdout!.readableEnded) await onceEvent(d.proc.stdout!, 'end');
    assert.ok(!existsSync(d.socketPath), `${signal}: socket removed`);
    const refused = d.logs.filter((l) => l?.msg === 'refused').map((l) => Number(/flood=(\d+)/.exec(l.url)?.[1]));
    assert.deepEqual(refused, [...Array(floods).keys()], `${signal}: every refusal logged, in order`);
    const order = d.logs.map((l) => l?.msg).filter((m) => /closed$/.test(m));
    assert.deepEqual(order, ['TCP front closed', 'unix socket closed', 'store closed'], 'reverse start order');
    assert.equal(d.logs.at(-1)?.msg, 'stopped', `${signal}: the last line`);
  }
});

test('a second daemon on the same GROVE_HOME refuses to start and leaves the first untouched', async (t) => {
  const first = await running();
  const repo = makeRepo(t);
  assert.equal((await first.socket('POST', '/api/projects', { body: { path: repo } })).status, 201);
  const ino = statSync(first.socketPath).ino;

  const second = spawnDaemon(first.home);
  t.after(() => stopProcess(second.proc, second.exited));
  assert.equal(await second.exited, EXIT_ALREADY_RUNNING);
  assert.match(second.stderr(), new RegExp(`pid ${first.proc.pid}\\b`), 'the message names the first daemon');

  assert.equal(statSync(first.socketPath).ino, ino, 'socket file untouched');
  for (const via of [first.socket, first.tcp]) {
    const h = await via('GET', '/api/health');
    assert.equal(h.json.pid, first.proc.pid);
  }
  assert.equal((await first.socket('GET', '/api/projects')).json.length, 1);
});

test('a daemon killed with SIGKILL can be started again, with its data', async (t) => {
  const d1 = await startDaemon(t);
  const repo = makeRepo(t);
  const added = await d1.socket('POST', '/api/projects', { body: { path: repo } });
  assert.equal(added.status, 201);
  assert.equal(await d1.stop('SIGKILL'), 'SIGKILL');
  assert.ok(existsSync(d1.socketPath), 'the stale socket file is left behind');
  assert.ok(existsSync(path.join(d1.home, 'data', 'grove.lock')), 'the stale lock is left behind');

  const d2 = await startDaemon(t, { home: d1.home });
  assert.deepEqual((await d2.socket('GET', '/api/projects')).json, [added.json]);
  assert.equal((await d2.tcp('GET', '/api/health')).json.pid, d2.proc.pid);
  const lock = JSON.parse(readFileSync(path.join(d2.home, 'data', 'grove.lock'), 'utf8'));
  assert.equal(lock.pid, d2.proc.pid, 'the lock was taken over');
});

test('a lock whose pid now belongs to another process is taken over', async (t) => {
  const home = makeHome(t);
  await seedStore(path.join(home, 'data'));
  // This test process is alive, but its start time is not the recorded one: pid reuse.
  writeFileSync(path.join(home, 'data', 'grove.lock'), JSON.stringify({ pid: process.pid, start_time: '1' }));
  const d = await startDaemon(t, { home });
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
});

test('a live socket of another daemon is not taken over', async (t) => {
  const first = await running();
  const home2 = makeHome(t);
  await seedStore(path.join(home2, 'data'));
  const second = spawnDaemon(home2, { GROVE_SOCKET: first.socketPath, GROVE_DATABASE_URL: (await storeUrlFor(home2)) ?? undefined });
  t.after(() => stopProcess(second.proc, second.exited));
  assert.equal(await second.exited, EXIT_ALREADY_RUNNING);
  assert.match(second.stderr(), /already listening on/);
  assert.equal((await first.socket('GET', '/api/health')).json.pid, first.proc.pid);
  assert.ok(!existsSync(path.join(home2, 'data', 'grove.lock')), 'the refused daemon released its lock');
});

test('a TCP port in use stops the start with a message, releasing everything', async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  t.after(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  const home = makeHome(t);
  await seedStore(path.join(home, 'data'));
  const d = spawnDaemon(home, { GROVE_PORT: String(port), GROVE_DATABASE_URL: (await storeUrlFor(home)) ?? undefined });
  t.after(() => stopProcess(d.proc, d.exited));
  assert.notEqual(await d.exited, 0);
  assert.match(d.stderr(), /EADDRINUSE/);
  assert.ok(!existsSync(path.join(home, 'grove.sock')), 'socket removed');
  assert.ok(!existsSync(path.join(home, 'data', 'grove.lock')), 'lock released');
});

test('an invalid user config stops the daemon with a message naming the file and the field', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['unknown field', '{"colour": "red"}', /\/colour/],
    ['wrong type', '{"port": "high"}', /\/port/],
    ['bad range', '{"port_range": [30000, 20000]}', /\/port_range/],
    ['bad agent', '{"agents": {"x": {"command": []}}}', /\/agents\/x\/command/],
    ['not JSON', '{port: 1}', /not valid JSON/],
  ];
  for (const [what, text, field] of cases) {
    const home = makeHome(t);
    const file = path.join(home, 'config.json');
    writeFileSync(file, text);
    const d = spawnDaemon(home);
    t.after(() => stopProcess(d.proc, d.exited));
    assert.equal(await d.exited, EXIT_CONFIG, what);
    assert.ok(d.stderr().includes(file), `${what}: names the file: ${d.stderr()}`);
    assert.match(d.stderr(), field, what);
    assert.ok(!existsSync(path.join(home, 'grove.sock')), `${what}: nothing listens`);
  }
  const home = makeHome(t);
  const bad = spawnDaemon(home, { GROVE_PORT: 'eighty' });
  t.after(() => stopProcess(bad.proc, bad.exited));
  assert.equal(await bad.exited, EXIT_CONFIG);
  assert.match(bad.stderr(), /GROVE_PORT/);
});

test('a valid user config is applied: its port opens the TCP front', async (t) => {
  const home = makeHome(t);
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ port, port_range: [21000, 21999], setup_timeout_s: 30 }));
  const d = await startDaemon(t, { home, env: { GROVE_PORT: undefined } });
  assert.equal(d.port, port);
  assert.equal((await d.tcp('GET', '/api/health')).status, 200);
});

test('a brand-new data folder is initialised on first start', async (t) => {
  const d = await startDaemon(t, { noSeed: true });
  // On PostgreSQL (npm run test:postgres) the new store is a new database, migrated here; on
  // PGlite the build's prepared store, already migrated, is copied.
  if (await storeUrlFor(d.home)) {
    assert.ok(!existsSync(path.join(d.home, 'data', 'pgdata')), 'no PGlite folder beside PostgreSQL');
    assert.ok(d.logs.some((l) => l?.migration === '0001_projects.sql'));
  } else pgliteMade(d);
  const repo = makeRepo(t);
  assert.equal((await d.socket('POST', '/api/projects', { body: { path: repo } })).status, 201);
});

// PGlite's first start: the prepared store copied into the data folder, announced before it begins.
function pgliteMade(d: { logs: any[] }): void {
  const made = d.logs.find((l) => l?.msg === 'new store initialised');
  assert.ok(made);
  assert.equal(made.prepared, true, 'the build prepared a store to copy');
  // What is happening is said before the wait, not only after it.
  const said = d.logs.find((l) => l?.msg === 'first start: creating the store from the prepared one');
  assert.ok(said, 'the first start says it is creating the store');
  const began = Date.parse(made.time) - made.ms;
  assert.ok(Date.parse(said.time) <= began + 50, `said at ${said.time}, the store's creation began at ${new Date(began).toISOString()}`);
  assert.ok(!d.logs.some((l) => l?.migration), 'no migration left to apply');
}

// Every file under node_modules/.cache with its size and mtime (empty when there is none).
function cacheListing(): string[] {
  const dir = path.join(ROOT, 'node_modules', '.cache');
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[])
    .map((f) => {
      const st = statSync(path.join(dir, f));
      return `${f} ${st.size} ${st.mtimeMs}`;
    })
    .sort();
}

// Whether something (the user's own grove, say) already listens on 127.0.0.1:`port`.
async function taken(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(true));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
}

// The README's quick start: `npm start` with no settings serves on the socket and 127.0.0.1:7433.
// Where 7433 is taken (the user's own grove service runs), the default is still what it tries:
// it then exits 1 naming the port, and nothing else of the test can run.
test('npm start serves GET /api/health on the socket and on 127.0.0.1:7433', async (t) => {
  const busy = await taken(7433);
  const home = makeHome(t);
  await seedStore(path.join(home, 'data'));
  const env: NodeJS.ProcessEnv = { ...process.env, GROVE_HOME: home, GROVE_DATABASE_URL: (await storeUrlFor(home)) ?? undefined };
  delete env.GROVE_PORT;
  const cacheBefore = cacheListing();
  const proc = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<number | string>((r) => proc.once('exit', (c, s) => r(c ?? s ?? -1)));
  t.after(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      process.kill(-proc.pid!, 'SIGTERM');
      await exited;
    }
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  if (busy) {
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    assert.equal(await exited, 1, 'port 7433 is taken: the daemon cannot start');
    assert.match(out + stderr, /EADDRINUSE[^\n]*127\.0\.0\.1:7433/, 'it names the default port it tried');
    return;
  }
  const ready = await new Promise<any>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (line.includes('grove daemon ready')) resolve(JSON.parse(line));
    });
    void exited.then((c) => reject(new Error(`npm start exited ${c}: ${stderr}`)));
  });
  assert.equal(ready.port, 7433);
  assert.equal(ready.socket, path.join(home, 'grove.sock'));
  // Built once at install: a start compiles, bundles and caches nothing.
  assert.deepEqual(cacheListing(), cacheBefore, 'nothing written under node_modules/.cache at start');

  const tcp = await request('http://127.0.0.1:7433/api/health');
  const viaTcp = (await tcp.body.json()) as any;
  const client = new Client('http://localhost', { socketPath: ready.socket });
  t.after(() => client.close());
  const sock = await client.request({ path: '/api/health', method: 'GET' });
  const viaSocket = (await sock.body.json()) as any;
  assert.equal(tcp.statusCode, 200);
  assert.equal(sock.statusCode, 200);
  assert.equal(viaTcp.status, 'ok');
  assert.deepEqual(viaTcp, viaSocket, 'both listeners reach the same daemon');
});

test('removing a project removes its archived tasks, their sessions and every stored line (no foreign key on lines)', async (t) => {
  const { d, project, task } = await readyTask(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { args: ['print:500'] } });
  await waitSessionEnd(d, s.json.id);
  assert.equal((await d.socket('GET', `/api/sessions/${s.json.id}/output?limit=5000`)).json.lines.length, 500);
  assert.equal((await d.socket('DELETE', `/api/tasks/${task.id}`)).status, 200);
  assert.equal((await d.socket('DELETE', `/api/projects/${project.id}`)).status, 204);
  assert.equal((await d.socket('GET', `/api/sessions/${s.json.id}`)).status, 404);
  assert.equal(await d.stop(), 0);

  // The daemon's own store, whichever driver (PGlite in its data folder, or its PostgreSQL database).
  const store = await openStore({ dataDir: path.join(d.home, 'data'), databaseUrl: await storeUrlFor(d.home), log: pino({ level: 'silent' }) });
  t.after(() => store.close());
  const count = async (table: string) => (await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  assert.equal(await count('sessions'), 0);
  assert.equal(await count('session_lines'), 0, 'the lines went with their session');
  assert.equal(await count('tasks'), 0);
});
