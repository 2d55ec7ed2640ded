// The commands table (DESIGN §14.2): a take and a withdrawal never both win, a command older than
// TAKE_WITHIN_S is never taken, a host's own restart abandons what it had taken, and a command
// withdrawn untaken takes its host offline until its loop looks at its queue again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test from 'node:test';
import { commandsTable, KEEP_H, TAKE_WITHIN_S } from '../../daemon/store/commands.ts';
import { hostsTable } from '../../daemon/store/hosts.ts';
import { addTask, openTestStore, TEST_HOST_ID, type TestStore } from '../helpers/store.ts';

const OWNER = TEST_HOST_ID;
const ASKER = '00000000-0000-4000-8000-000000000002';

async function setup(t: test.TestContext) {
  const s = await openTestStore((fn) => t.after(fn));
  const hosts = hostsTable(s.store.db, s.events);
  await hosts.start({ id: OWNER, name: 'owner', version: '1' });
  await hosts.start({ id: ASKER, name: 'asker', version: '1' });
  return { s, hosts, rows: commandsTable(s.store.db) };
}

const request = (id = randomUUID()) => ({
  id,
  host_id: OWNER,
  from_host_id: ASKER,
  method: 'POST',
  path: '/api/tasks/x/commit?dry=1',
  headers: { 'content-type': 'application/json' },
  body: '{"message":"m"}',
});

// Makes a command look `s` seconds old by the store's clock.
const age = (s: TestStore, id: string, seconds: number) =>
  s.store.db.query(`UPDATE commands SET created_at = now() - make_interval(secs => $2) WHERE id = $1`, [id, seconds]);

test('taken once, by its host only; answered with its bytes as they were; a taken command cannot be withdrawn', async (t) => {
  const { s, rows } = await setup(t);
  const c = await rows.insert(request());
  assert.equal(c.status, 'pending');
  assert.equal(await rows.take(ASKER), null, 'another host never takes it');
  const taken = await rows.take(OWNER);
  assert.deepEqual(
    { id: taken?.id, status: taken?.status, method: taken?.method, path: taken?.path, headers: taken?.headers, body: taken?.body },
    { id: c.id, status: 'taken', method: 'POST', path: '/api/tasks/x/commit?dry=1', headers: { 'content-type': 'application/json' }, body: '{"message":"m"}' },
  );
  assert.equal(await rows.take(OWNER), null, 'taken once');
  await age(s, c.id, TAKE_WITHIN_S + 1);
  assert.equal(await rows.withdraw(c.id), false, 'too late to withdraw');

  const bytes = Buffer.from([0xff, 0x00, 0x41, 0xfe]);
  assert.equal(await rows.answer(c.id, { status: 409, headers: { 'content-type': 'text/x-diff' }, body: bytes }), true);
  const done = (await rows.get(c.id))!;
  assert.equal(done.status, 'done');
  assert.deepEqual(done.answer, { status: 409, headers: { 'content-type': 'text/x-diff' }, body: bytes });
  assert.equal(await rows.answer(c.id, { status: 200, headers: {}, body: Buffer.alloc(0) }), false, 'answered once');
});

test(`pending past ${TAKE_WITHIN_S} s: never taken, withdrawn by the requester; younger: not yet withdrawn, taken oldest first`, async (t) => {
  const { s, rows } = await setup(t);
  const old = await rows.insert(request());
  await age(s, old.id, TAKE_WITHIN_S + 0.5);
  const young = await rows.insert(request());
  const younger = await rows.insert(request());
  await age(s, young.id, 1);
  assert.equal(await rows.withdraw(young.id), false, 'the owner may still take it');
  assert.equal((await rows.take(OWNER))?.id, young.id, 'the oldest of the young ones');
  assert.equal((await rows.take(OWNER))?.id, younger.id);
  assert.equal(await rows.take(OWNER), null, 'the old one is never taken');
  assert.equal(await rows.withdraw(old.id), true);
  assert.equal(await rows.withdraw(old.id), false, 'withdrawn once');
  assert.equal((await rows.get(old.id))!.status, 'withdrawn');
  assert.equal(await rows.take(OWNER), null);
});

test('at the same moment, two takes of one command: one gets it', async (t) => {
  const { rows } = await setup(t);
  const c = await rows.insert(request());
  const got = await Promise.all([rows.take(OWNER), rows.take(OWNER), rows.take(OWNER)]);
  assert.deepEqual(got.filter(Boolean).map((x) => x!.id), [c.id]);
});

test("a host's start abandons what it had taken and not answered; its answer then is refused; others' are kept", async (t) => {
  const { rows } = await setup(t);
  const mine = await rows.insert(request());
  await rows.take(OWNER);
  const waiting = await rows.insert(request());
  const theirs = await rows.insert({ ...request(), host_id: ASKER, from_host_id: OWNER });
  await rows.take(ASKER);
  assert.equal(await rows.abandonTaken(OWNER), 1);
  assert.deepEqual(
    [(await rows.get(mine.id))!.status, (await rows.get(waiting.id))!.status, (await rows.get(theirs.id))!.status],
    ['abandoned', 'pending', 'taken'],
  );
  assert.equal(await rows.answer(mine.id, { status: 200, headers: {}, body: Buffer.from('{}') }), false);
  assert.equal((await rows.get(mine.id))!.status, 'abandoned', 'never made done after');
});

test('a host with a fresh heartbeat is offline (host.offline, once) when a command to it is withdrawn untaken, and online again (host.online) when its loop looks at its queue', async (t) => {
  const { s, hosts, rows } = await setup(t);
  const events = async () => (await s.events.page({}, 0, 1000)).filter((e) => e.type.startsWith('host.') && (e.data as { id: string }).id === OWNER).map((e) => [e.type, (e.data as { online: boolean }).online]);
  await hosts.polled(OWNER);
  assert.equal((await hosts.get(OWNER))!.online, true);
  const c = await rows.insert(request());
  await age(s, c.id, TAKE_WITHIN_S + 1);
  assert.equal(await rows.withdraw(c.id), true);
  await hosts.unresponsive(OWNER);
  await hosts.unresponsive(OWNER);
  await hosts.beat(OWNER);
  assert.equal((await hosts.get(OWNER))!.online, false, 'its heartbeat alone does not keep it online');
  assert.equal((await hosts.get(ASKER))!.online, true, 'the others are not touched');
  await hosts.polled(OWNER);
  await hosts.polled(OWNER);
  assert.equal((await hosts.get(OWNER))!.online, true);
  assert.deepEqual(await events(), [['host.online', true], ['host.offline', false], ['host.online', true]]);

  // Unresponsive, then its heartbeat stale too: still one host.offline; back when both are cleared.
  await hosts.unresponsive(OWNER);
  await s.store.db.query(`UPDATE hosts SET seen_at = now() - interval '1 minute' WHERE id = $1`, [OWNER]);
  await hosts.beat(ASKER);
  await hosts.beat(OWNER);
  assert.equal((await hosts.get(OWNER))!.online, false, 'beating, but not looking at its queue');
  await hosts.polled(OWNER);
  assert.equal((await hosts.get(OWNER))!.online, true);
  assert.deepEqual((await events()).slice(3), [['host.offline', false], ['host.online', true]]);
});

test('ownerOf: the host of a project, task, session or approval by id; null for none', async (t) => {
  const { s, rows } = await setup(t);
  const task = await addTask(t, s);
  const id = randomUUID();
  await s.sessions.insert({ id, task_id: task.id, agent: 'fixture', command: ['true'], mode: 'edit', prompt: null, conversation_id: id, parent_id: null, pid: process.pid });
  const approval = randomUUID();
  await s.store.db.query(
    `INSERT INTO approvals (id, session_id, task_id, project_id, key, kind, tool, input, nonce) VALUES ($1, $2, $3, $4, 'k', 'tool', 'Bash', '{}', 'n')`,
    [approval, id, task.id, task.project_id],
  );
  assert.equal(await rows.ownerOf('project', task.project_id), OWNER);
  assert.equal(await rows.ownerOf('task', task.id), OWNER);
  assert.equal(await rows.ownerOf('session', id), OWNER);
  assert.equal(await rows.ownerOf('approval', approval), OWNER);
  assert.equal(await rows.ownerOf('task', randomUUID()), null);
});

test(`prune: a host's commands older than ${KEEP_H} h go, except one it is running; younger ones and other hosts' stay`, async (t) => {
  const { s, rows } = await setup(t);
  const old = await rows.insert(request());
  const running = await rows.insert(request());
  await rows.take(OWNER);
  await rows.take(OWNER);
  await rows.answer(old.id, { status: 200, headers: {}, body: Buffer.from('{}') });
  const young = await rows.insert(request());
  const theirs = await rows.insert({ ...request(), host_id: ASKER, from_host_id: OWNER });
  for (const c of [old, running, theirs]) await age(s, c.id, KEEP_H * 3600 + 60);
  assert.equal(await rows.prune(OWNER), 1);
  assert.equal(await rows.get(old.id), null);
  for (const c of [running, young, theirs]) assert.ok(await rows.get(c.id), c.id);
});
