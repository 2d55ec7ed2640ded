import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import test, { after, type TestContext } from 'node:test';
import type { SessionService } from '../../daemon/sessions/service.ts';
import { sessionFiles } from '../../daemon/sessions/wrapper.ts';
import { AGENT, gate, liveGroupMembers } from '../helpers/sessions.ts';
import { waitPidGone } from '../helpers/state.ts';
import { addTask, memoryLog, openTestStore, sessionService, TEST_HOST_ID, until } from '../helpers/store.ts';

// One store for the file, as one daemon's data folder: each test's "restart" is a second
// service on it, after the first one stopped following (the agents keep running).
const s = await openTestStore(after);
const agents = { fixture: { command: [AGENT, '{prompt}'] } };

// Starts a session and waits until it runs and its first line is stored; gone when the test ends.
async function running(t: TestContext, service: SessionService, taskId: string, args: string[]) {
  const started = await service.create(taskId, { agent: 'fixture', args });
  t.after(() => liveGroupMembers(started.pid!).forEach((pid) => process.kill(pid, 'SIGKILL')));
  await until(async () => (await service.get(started.id)).status === 'running', 'running');
  await until(async () => (await service.lines(started.id, 0, 10)).lines.length > 0, 'its first line');
  return started;
}

const texts = async (service: SessionService, id: string) => (await service.lines(id, 0, 1000)).lines.map((l) => l.text);

test('after a restart, a session whose process still runs (pid and start time match) is followed on to its end', async (t) => {
  const first = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const g = gate(t);
  const started = await running(t, first, task.id, ['echo:before', `wait:${g.path}`, 'echo:after', 'exit:2']);
  await first.close();

  const { log, records } = memoryLog();
  const second = sessionService(t, s, { agents, log });
  await second.reattach(TEST_HOST_ID);
  assert.ok(records.some((r) => r.msg === 're-attached to running session' && r.session === started.id));
  assert.equal((await second.get(started.id)).status, 'running');
  const end = new Promise((r) => second.ended.onChange(started.id, r));
  g.release();
  await end; // not our child: the liveness check notices the end
  const s2 = await second.get(started.id);
  assert.equal(s2.status, 'failed');
  assert.equal(s2.exit_code, 2);
  assert.deepEqual(await texts(second, started.id), ['before', 'after'], 'every line once');
});

test('a session that ended while no daemon followed it gets the status its wrapper recorded, or lost without one', async (t) => {
  const first = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const g = gate(t);
  const recorded = await running(t, first, task.id, ['echo:working', `wait:${g.path}`, 'echo:done', 'exit:7']);
  const vanished = await running(t, first, task.id, ['echo:working', 'sleep:300']);
  await first.close();
  g.release();
  await until(() => existsSync(sessionFiles(s.dataDir, recorded.id).exit), 'the wrapper’s record');
  // The wrapper killed too: nothing records an exit status.
  process.kill(-vanished.pid!, 'SIGKILL');
  await waitPidGone(vanished.pid!);

  const { log, records } = memoryLog();
  const second = sessionService(t, s, { agents, log });
  await second.reattach(TEST_HOST_ID);
  const [r, v] = [await second.get(recorded.id), await second.get(vanished.id)];
  assert.deepEqual([r.status, r.exit_code], ['failed', 7]);
  assert.deepEqual([v.status, v.exit_code], ['lost', null]);
  assert.deepEqual(await texts(second, recorded.id), ['working', 'done'], 'the lines written meanwhile are stored');
  assert.deepEqual(await texts(second, vanished.id), ['working']);
  assert.ok(!records.some((x) => x.msg === 're-attached to running session'));
});

test('a pid whose start time no longer matches is another process: not re-attached, never signalled, the session is lost', async (t) => {
  const first = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const started = await running(t, first, task.id, ['echo:working', 'sleep:300']);
  await first.close();
  // As if the pid had been reused by another process since.
  await s.store.db.query(`UPDATE sessions SET pid_start = 'not-' || pid_start WHERE id = $1`, [started.id]);

  const second = sessionService(t, s, { agents });
  await second.reattach(TEST_HOST_ID);
  assert.equal((await second.get(started.id)).status, 'lost');
  assert.ok(liveGroupMembers(started.pid!).includes(started.pid!), 'the process under that pid was left alone');
  await assert.rejects(second.kill(started.id), (err: any) => err.code === 'SESSION_NOT_RUNNING');
  assert.ok(liveGroupMembers(started.pid!).includes(started.pid!));
});
