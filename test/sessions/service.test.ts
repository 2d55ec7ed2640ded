// The session service (daemon/sessions/service.ts) alone, as the daemon wires it on a real store,
// with real agent processes (test/fixtures/agent.sh): its reads, the services of a task's
// .grove.json and their autostart, a session past its timeout_s, and first sessions that wait
// for other tasks (queueFirst, then started or failed). Each verb's own module has its own test.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import { AGENT, liveGroupMembers } from '../helpers/sessions.ts';
import { addTask, memoryLog, openTestStore, sessionService, TEST_HOST_ID, until } from '../helpers/store.ts';

const s = await openTestStore(after);
const agents = { fixture: { command: [AGENT, '{prompt}'] } };

const code = (c: string) => (err: any) => {
  assert.equal(err.code, c, err.message);
  return true;
};
// Kills what a session left running when the test ends.
const reap = (t: TestContext, pid: number | null) => t.after(() => pid && liveGroupMembers(pid).forEach((p) => process.kill(p, 'SIGKILL')));

test('reads: a task’s sessions, the board’s, the running agent, a session’s lines by page and its last ones; unknown ids are NOT_FOUND', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const done = await service.create(task.id, { agent: 'fixture', args: ['echo:one', 'echo:two', 'echo:three'] });
  await until(async () => (await service.get(done.id)).status === 'exited', 'its end');
  assert.equal(await service.runningAgent(task.id), null);
  const running = await service.create(task.id, { agent: 'fixture', args: ['sleep:300'] });
  reap(t, running.pid);
  assert.equal(await service.runningAgent(task.id), running.id);

  assert.deepEqual((await service.list(task.id)).map((x) => x.id), [done.id, running.id]);
  assert.deepEqual((await service.list(task.id, done.conversation_id)).map((x) => x.id), [done.id], 'one conversation');
  assert.ok((await service.listAll(task.project_id)).some((x) => x.id === running.id));
  const all = await service.lines(done.id, 0, 10);
  assert.deepEqual(all.lines.map((l) => [l.stream, l.text]), [['stdout', 'one'], ['stdout', 'two'], ['stdout', 'three']]);
  const page = await service.lines(done.id, all.lines[0]!.seq, 1);
  assert.deepEqual([page.lines.map((l) => l.text), page.next], [['two'], all.lines[1]!.seq]);
  assert.deepEqual((await service.lines(done.id, all.next, 10)), { lines: [], next: all.next }, 'nothing after the last: next stays');
  const last = await service.lastLines(done.id, 2);
  assert.deepEqual([last.lines.map((l) => l.text), last.next], [['two', 'three'], all.next]);
  assert.equal(service.isBusy(await service.get(running.id)), true);
  assert.equal(service.isBusy(await service.get(done.id)), false);

  const nobody = randomUUID();
  await assert.rejects(service.list(nobody), code('NOT_FOUND'));
  await assert.rejects(service.get(nobody), code('NOT_FOUND'));
  await assert.rejects(service.lines(nobody, 0, 10), code('NOT_FOUND'));
  await assert.rejects(service.lastLines(nobody, 10), code('NOT_FOUND'));
});

test('services: listed from .grove.json with their latest session; autostart starts the marked ones, and one that cannot start is logged, not thrown', async (t) => {
  const { log, records } = memoryLog();
  const service = sessionService(t, s, { agents, log });
  const task = await addTask(t, s);
  const project = await s.getProject(task.project_id);
  writeFileSync(path.join(project.path, '.grove.json'), JSON.stringify({ services: { web: { command: 'echo "web on $GROVE_SERVICE"; sleep 300', autostart: true }, db: { command: 'true' } } }));
  assert.deepEqual(await service.services(task.id), [
    { name: 'web', command: 'echo "web on $GROVE_SERVICE"; sleep 300', autostart: true, session: null },
    { name: 'db', command: 'true', autostart: false, session: null },
  ]);
  await service.autostart(task.id);
  const [web, db] = await service.services(task.id);
  assert.deepEqual([web!.session?.kind, web!.session?.agent, db!.session], ['service', 'web', null]);
  reap(t, web!.session!.pid);
  await until(async () => (await service.lines(web!.session!.id, 0, 10)).lines[0]?.text === 'web on web', 'its line');
  // A second autostart finds web running: logged, and the caller goes on.
  await service.autostart(task.id);
  assert.ok(records.some((r) => r.msg === 'autostart of a service failed' && r.service === 'web' && r.err.code === 'SERVICE_RUNNING'));
  await assert.rejects(service.startService(task.id, 'nope'), code('NOT_FOUND'));
});

test('a session past its timeout_s is killed, recorded timed out', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const slow = await service.create(task.id, { agent: 'fixture', args: ['echo:start', 'sleep:300'], timeout_s: 1 });
  reap(t, slow.pid);
  const ended = new Promise((r) => service.ended.onChange(slow.id, r));
  await ended;
  const rec = await service.get(slow.id);
  assert.deepEqual([rec.status, rec.timed_out, rec.exit_code], ['killed', true, null]);
  assert.deepEqual(liveGroupMembers(slow.pid!), [], 'its whole group is gone');
});

test('a first session waiting for other tasks: queued with them, then started, or failed with the reason', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const other = await addTask(t, s);
  const project = await s.getProject(task.project_id);
  const ask = service.planFirst(project.path, { agent: 'fixture', args: ['echo:after the merge'] });
  assert.throws(() => service.planFirst(project.path, { agent: 'missing' }), code('UNKNOWN_AGENT'));
  const queued = await service.queueFirst(task.id, ask, [other.id]);
  assert.deepEqual([queued.status, queued.pid, queued.after], ['queued', null, [other.id]]);
  const waiting = await service.waitingForTasks(TEST_HOST_ID);
  const rec = waiting.find((r) => r.id === queued.id)!;
  assert.ok(rec);
  await service.startWaiting(rec);
  await until(async () => (await service.get(queued.id)).status === 'exited', 'its run');
  assert.deepEqual((await service.lines(queued.id, 0, 10)).lines.map((l) => l.text), ['after the merge']);

  const second = await addTask(t, s);
  const never = await service.queueFirst(second.id, service.planFirst(project.path, { agent: 'fixture' }), [other.id]);
  await service.failWaiting((await service.waitingForTasks(TEST_HOST_ID)).find((r) => r.id === never.id)!, `task ${other.id} was archived without merging`);
  const failed = await service.get(never.id);
  assert.equal(failed.status, 'failed');
  assert.deepEqual((await service.lines(never.id, 0, 10)).lines.map((l) => l.text), [`grove: task ${other.id} was archived without merging`], 'the reason is its one line');
  assert.ok(!(await service.waitingForTasks(TEST_HOST_ID)).some((r) => r.id === never.id));
});
