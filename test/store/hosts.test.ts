import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test from 'node:test';
import { hostsTable } from '../../daemon/store/hosts.ts';
import { addTask, openTestStore, TEST_HOST_ID, type TestStore } from '../helpers/store.ts';

const hostEvents = async (s: TestStore) =>
  (await s.events.page({}, 0, 1000)).filter((e) => e.type.startsWith('host.')).map((e) => [e.type, (e.data as { id: string }).id]);

// A host whose last heartbeat is a minute old, as a daemon that died leaves it.
async function staleHost(s: TestStore, name: string): Promise<string> {
  const id = randomUUID();
  await s.store.db.query(`INSERT INTO hosts (id, name, version, seen_at) VALUES ($1, $2, '0.0.1', now() - interval '1 minute')`, [id, name]);
  return id;
}

test('start: the host is online with host.online, and the rows made before hosts existed become its own', async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const hosts = hostsTable(s.store.db, s.events);
  const task = await addTask(t, s);
  await s.store.db.query('UPDATE projects SET host_id = NULL');
  await s.store.db.query('UPDATE tasks SET host_id = NULL');
  const me = randomUUID();
  const started = await hosts.start({ id: me, name: 'box', version: '1.2.3' });
  assert.equal(started.online, true);
  assert.deepEqual(await hosts.list(), [started]);
  assert.deepEqual(
    { kind: started.kind, id: started.id, name: started.name, version: started.version, running: started.running },
    { kind: 'team', id: me, name: 'box', version: '1.2.3', running: 0 },
  );
  assert.deepEqual(await hostEvents(s), [['host.online', me]]);
  assert.equal((await s.getProject(task.project_id)).host_id, me);
  assert.equal((await s.getTask(task.id)).host_id, me);
});

test("running counts the host's starting and running sessions, from its tasks' host", async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const hosts = hostsTable(s.store.db, s.events);
  await hosts.start({ id: TEST_HOST_ID, name: 'box', version: '1' });
  const task = await addTask(t, s);
  const id = randomUUID();
  const session = await s.sessions.insert({ id, task_id: task.id, agent: 'fixture', command: ['true'], mode: 'edit', prompt: null, conversation_id: id, parent_id: null, pid: process.pid });
  assert.equal(session.host_id, TEST_HOST_ID, "a session's host is its task's");
  assert.equal((await hosts.get(TEST_HOST_ID))!.running, 1);
  await s.store.db.query(`UPDATE sessions SET status = 'exited' WHERE id = $1`, [id]);
  assert.equal((await hosts.get(TEST_HOST_ID))!.running, 0);
});

test('a beat records every stale host offline once; a stale host that beats again is online again', async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const hosts = hostsTable(s.store.db, s.events);
  const me = randomUUID();
  await hosts.start({ id: me, name: 'me', version: '1' });
  const gone = await staleHost(s, 'gone');
  assert.equal((await hosts.get(gone))!.online, false, 'offline as soon as its heartbeat is stale');
  await hosts.beat(me);
  await hosts.beat(me);
  assert.deepEqual(await hostEvents(s), [['host.online', me], ['host.offline', gone]]);
  const offline = (await s.events.page({}, 0, 1000)).at(-1)!;
  assert.equal((offline.data as { online: boolean }).online, false);

  await hosts.beat(gone);
  assert.equal((await hosts.get(gone))!.online, true);
  await hosts.beat(me);
  assert.deepEqual((await hostEvents(s)).slice(2), [['host.online', gone]]);
});

test('stop: offline at once with host.offline, once; a start brings it back', async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const hosts = hostsTable(s.store.db, s.events);
  const me = randomUUID();
  await hosts.start({ id: me, name: 'me', version: '1' });
  await hosts.stop(me);
  await hosts.stop(me);
  assert.equal((await hosts.get(me))!.online, false);
  await hosts.start({ id: me, name: 'me again', version: '2' });
  const back = (await hosts.get(me))!;
  assert.deepEqual([back.online, back.name, back.version], [true, 'me again', '2']);
  assert.deepEqual(await hostEvents(s), [['host.online', me], ['host.offline', me], ['host.online', me]]);
});
