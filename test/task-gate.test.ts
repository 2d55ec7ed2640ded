import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTaskGate } from '../daemon/tasks/gate.ts';

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
