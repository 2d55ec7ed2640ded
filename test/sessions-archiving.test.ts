import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createTaskGate } from '../daemon/tasks/gate.ts';
import { gate as fifo } from './helpers/sessions.ts';
import { addTask, openTestStore, sessionService, until } from './helpers/store.ts';

const s = await openTestStore(after);

// Pins its session id (so a follow-up can resume it) and waits on the FIFO its prompt names.
const agents = {
  pinned: { command: ['sh', '-c', 'read -r _ < "$0"', '{prompt}', '{session}'], resume: ['sh', '-c', 'echo resumed', '{session}', '{prompt}'] },
};

test('sessions: a queued follow-up whose turn comes once the task\'s archive has begun is cancelled (killed, with the reason), never started', async (t) => {
  const gate = createTaskGate();
  const service = sessionService(t, s, { agents, gate });
  const task = await addTask(t, s);
  const hold = fifo(t);
  const first = await service.create(task.id, { agent: 'pinned', prompt: hold.path });
  const queued = await service.send(first.id, { prompt: 'go on' });
  assert.equal(queued.status, 202);

  // The archive begins (before it kills anything); the running session then ends by itself.
  await gate.close(task.id);
  await assert.rejects(service.create(task.id, { agent: 'pinned', prompt: hold.path }), { code: 'TASK_NOT_READY' });
  await assert.rejects(service.send(first.id, { prompt: 'more' }), { code: 'TASK_NOT_READY' });
  hold.release();
  const follow = await until(async () => {
    const rec = await service.get(queued.session.id);
    return !service.isLive(rec) && rec;
  }, 'the follow-up to end');
  assert.deepEqual([follow.status, follow.pid], ['killed', null], 'cancelled, never started');
  assert.deepEqual((await service.lines(follow.id, 0, 10)).lines.map((l) => l.text), [`grove: cancelled: task work is being archived; nothing starts on it`]);
});
