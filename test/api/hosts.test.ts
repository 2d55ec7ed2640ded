import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { createEventBus } from '../../daemon/events/bus.ts';
import { openStore } from '../../daemon/store/db.ts';
import { eventsTable } from '../../daemon/store/events.ts';
import { hostsTable } from '../../daemon/store/hosts.ts';
import { addProject, makeHome, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { onPostgres, storeUrlFor } from '../helpers/postgres.ts';
import { agentHome, gate, readyTaskOn, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { seedStore } from '../helpers/template.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const hosts = async (d: TestDaemon) => {
  const r = await d.socket('GET', '/api/hosts');
  assert.equal(r.status, 200, r.text);
  return r.json as any[];
};
const hostEvents = async (d: TestDaemon) =>
  ((await d.socket('GET', '/api/events?after=0')).json.events as any[]).filter((e) => e.type.startsWith('host.'));

test('GET /api/hosts: this daemon, online, named by host_name; its running count follows a session; host_id on project, task and session', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t, { host_name: 'alpha-box' }) });
  const [me, ...others] = await hosts(d);
  assert.deepEqual(others, []);
  assert.equal(me.kind, 'team');
  assert.match(me.id, UUID);
  assert.equal(me.name, 'alpha-box');
  assert.equal(me.version, (await d.socket('GET', '/api/health')).json.version);
  assert.equal(me.online, true);
  assert.match(me.started_at, ISO_MS);
  assert.match(me.seen_at, ISO_MS);
  assert.equal(me.running, 0);
  const health = (await d.socket('GET', '/api/health')).json;
  assert.deepEqual([health.host_id, health.shared], [me.id, onPostgres], 'health names this host and whether the store is shared');
  const online = await hostEvents(d);
  assert.deepEqual(online.map((e) => [e.type, e.data.id, e.data.online]), [['host.online', me.id, true]]);
  assert.equal(online[0].project_id, null);

  const { project, task } = await readyTaskOn(d, t);
  assert.equal(project.host_id, me.id);
  assert.equal(project.repository, null, 'a repository without origin');
  assert.equal(task.host_id, me.id);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.host_id, me.id);

  const g = gate(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `wait:${g.path}` } });
  assert.equal(s.status, 201, s.text);
  assert.equal(s.json.host_id, me.id);
  await d.waitForLog((l) => l.msg === 'session running' && l.session === s.json.id);
  assert.equal((await hosts(d))[0].running, 1);
  const ended = waitSessionEnd(d, s.json.id);
  g.release();
  await ended;
  assert.equal((await hosts(d))[0].running, 0);
  assert.equal((await d.socket('GET', `/api/sessions/${s.json.id}`)).json.host_id, me.id);

  // The heartbeat goes on by itself: seen_at moves, started_at does not.
  const beaten = await until(async () => {
    const [h] = await hosts(d);
    return h.seen_at > me.seen_at && h;
  }, 'a heartbeat', 15_000);
  assert.equal(beaten.started_at, me.started_at);
  assert.equal(beaten.online, true);
});

test('the host id survives a restart (its name follows host_name); a clean stop records host.offline; repository is read at add and again at start', async (t) => {
  const home = makeHome(t);
  const d1 = await startDaemon(t, { home, config: { host_name: 'first' } });
  const [me] = await hosts(d1);
  const withOrigin = makeRepo(t);
  git(withOrigin, 'remote', 'add', 'origin', 'git@github.com:Acme/Widgets.git');
  const p1 = await addProject(d1, withOrigin);
  assert.equal(p1.repository, 'github.com/Acme/Widgets');
  assert.equal(p1.host_id, me.id);
  assert.equal(await d1.stop(), 0);

  git(withOrigin, 'remote', 'set-url', 'origin', 'https://github.com/acme/renamed.git');
  const d2 = await startDaemon(t, { home, config: { host_name: 'second' } });
  const [again, ...others] = await hosts(d2);
  assert.deepEqual(others, []);
  assert.equal(again.id, me.id);
  assert.equal(again.name, 'second');
  assert.equal(again.online, true);
  assert.ok(again.started_at > me.started_at, 'started_at is the new start');
  assert.deepEqual(
    (await hostEvents(d2)).map((e) => [e.type, e.data.id, e.data.online]),
    [['host.online', me.id, true], ['host.offline', me.id, false], ['host.online', me.id, true]],
  );
  const p2 = (await d2.socket('GET', `/api/projects/${p1.id}`)).json;
  assert.equal(p2.repository, 'github.com/acme/renamed');
  assert.equal(p2.host_id, me.id);
});

test("a host whose heartbeat is stale is listed offline, and one host.offline is recorded by the daemon that notices", async (t) => {
  // The stale host is written into the store of a daemon that is not running yet, as a host that
  // died a minute ago leaves its row (two daemons cannot share one PGlite).
  const home = makeHome(t);
  const dataDir = path.join(home, 'data');
  // The store the daemon will open: its PGlite, or its database under test:postgres.
  const databaseUrl = await storeUrlFor(home);
  if (databaseUrl === null) await seedStore(dataDir);
  const store = await openStore({ dataDir, log: pino({ level: 'silent' }), ...(databaseUrl !== null ? { databaseUrl } : {}) });
  const gone = randomUUID();
  try {
    await hostsTable(store.db, eventsTable(store.db, createEventBus().publish)).start({ id: gone, name: 'gone-box', version: '0.0.1' });
    await store.db.query(`UPDATE hosts SET seen_at = now() - interval '1 minute', started_at = now() - interval '2 minutes' WHERE id = $1`, [gone]);
  } finally {
    await store.close();
  }

  const d = await startDaemon(t, { home, config: { host_name: 'alive-box' } });
  const list = await hosts(d);
  assert.deepEqual(list.map((h) => [h.name, h.online]), [['alive-box', true], ['gone-box', false]]);
  // The daemon's first heartbeat runs before it is ready.
  const offline = (await hostEvents(d)).filter((e) => e.type === 'host.offline');
  assert.deepEqual(offline.map((e) => [e.data.id, e.data.name, e.data.online]), [[gone, 'gone-box', false]]);
});
