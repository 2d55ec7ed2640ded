import assert from 'node:assert/strict';
import test, { after, type TestContext } from 'node:test';
import type { SessionService } from '../../daemon/sessions/service.ts';
import { AGENT, liveGroupMembers } from '../helpers/sessions.ts';
import { addTask, openTestStore, sessionService, until } from '../helpers/store.ts';

// One store for the file: each test has a task of its own.
const s = await openTestStore(after);
const agents = { fixture: { command: [AGENT, '{prompt}'] } };

// A session printing `up` and then sleeping, once its line is stored; gone when the test ends.
async function sleeper(t: TestContext, service: SessionService, taskId: string) {
  const started = await service.create(taskId, { agent: 'fixture', args: ['echo:up', 'sleep:300'] });
  t.after(() => liveGroupMembers(started.pid!).forEach((pid) => process.kill(pid, 'SIGKILL')));
  await until(async () => (await service.lines(started.id, 0, 10)).lines.length === 1, 'its first line');
  return started;
}

test('a kill stops the whole process group, keeps the output and answers killed, also to a second and a concurrent kill', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const started = await sleeper(t, service, task.id);
  assert.ok(liveGroupMembers(started.pid!).length >= 2, 'the wrapper and the agent');
  const both = await Promise.all([service.kill(started.id), service.kill(started.id)]);
  assert.deepEqual(both, [{ status: 'killed' }, { status: 'killed' }]);
  assert.deepEqual(liveGroupMembers(started.pid!), [], 'nothing of the group is left');
  const after = await service.get(started.id);
  assert.equal(after.status, 'killed');
  assert.equal(after.exit_code, null);
  assert.ok(after.ended_at);
  assert.equal((await service.lines(started.id, 0, 10)).lines[0]?.text, 'up', 'what it printed before is kept');
  assert.deepEqual(await service.kill(started.id), { status: 'killed' }, 'the same answer for a session already killed');
});

test('a session that ended is not running: SESSION_NOT_RUNNING; an unknown id is NOT_FOUND', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const done = await service.create(task.id, { agent: 'fixture', args: ['exit:3'] });
  await until(async () => (await service.get(done.id)).status === 'failed', 'its end');
  await assert.rejects(service.kill(done.id), (err: any) => err.code === 'SESSION_NOT_RUNNING');
  assert.equal((await service.get(done.id)).status, 'failed', 'its ending is kept');
  await assert.rejects(service.kill('00000000-0000-4000-8000-000000000000'), (err: any) => err.code === 'NOT_FOUND');
});

test('killing all of a task’s sessions kills the live ones and leaves the ended ones as they ended', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const other = await addTask(t, s);
  const done = await service.create(task.id, { agent: 'fixture', args: ['exit:0'] });
  await until(async () => (await service.get(done.id)).status === 'exited', 'its end');
  const a = await sleeper(t, service, task.id);
  const b = await sleeper(t, service, task.id);
  const elsewhere = await sleeper(t, service, other.id);
  await service.killAllOfTask(task.id);
  assert.deepEqual(
    (await service.list(task.id)).map((x) => [x.id, x.status]),
    [
      [done.id, 'exited'],
      [a.id, 'killed'],
      [b.id, 'killed'],
    ],
  );
  for (const x of [a, b]) assert.deepEqual(liveGroupMembers(x.pid!), []);
  assert.ok(service.isBusy(await service.get(elsewhere.id)), 'another task’s session is untouched');
  assert.ok(liveGroupMembers(elsewhere.pid!).length >= 2);
  assert.deepEqual(await service.kill(elsewhere.id), { status: 'killed' });
});
