import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createTaskGate } from '../../daemon/tasks/gate.ts';
import { gate as fifo } from '../helpers/sessions.ts';
import { addTask, openTestStore, sessionService, until } from '../helpers/store.ts';

// Opened before the first test is registered, so that `after` closes it with the file.
const s = await openTestStore(after);

// Pins its session id (so a follow-up can resume it) and waits on the FIFO its prompt names.
const agents = {
  pinned: { command: ['sh', '-c', 'read -r _ < "$0"', '{prompt}', '{session}'], resume: ['sh', '-c', 'echo resumed', '{session}', '{prompt}'] },
};

test('tasks/gate: a start admitted before an archive began is done before close() returns; after it every start is refused until end()', async () => {
  const gate = createTaskGate();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const order: string[] = [];
  const first = gate.admit('a', async () => {
    await held;
    order.push('start stored');
    return 1;
  });
  const closing = gate.close('a').then(() => order.push('archive began'));
  // Another task is not held up.
  assert.equal(await gate.admit('b', async () => 2), 2);
  release();
  await closing;
  assert.equal(await first, 1);
  assert.deepEqual(order, ['start stored', 'archive began']);
  assert.equal(gate.isClosing('a'), true);
  await assert.rejects(gate.admit('a', async () => 3), { name: 'GroveError', code: 'TASK_NOT_READY' });

  // Two archives of one task: the gate stays closed until both ended.
  await gate.close('a');
  gate.end('a');
  await assert.rejects(gate.admit('a', async () => 4), { code: 'TASK_NOT_READY' });
  gate.end('a');
  assert.equal(gate.isClosing('a'), false);
  assert.equal(await gate.admit('a', async () => 5), 5);
});

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
    return !service.isBusy(rec) && rec;
  }, 'the follow-up to end');
  assert.deepEqual([follow.status, follow.pid], ['killed', null], 'cancelled, never started');
  assert.deepEqual((await service.lines(follow.id, 0, 10)).lines.map((l) => l.text), [`grove: cancelled: task job is being archived; nothing starts on it`]);
});
