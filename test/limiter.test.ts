import assert from 'node:assert/strict';
import test from 'node:test';
import { createLimiter } from '../daemon/runtime/limiter.ts';

// Session output rounds share one limiter: at most n are read and stored at a time.
test('a limiter runs at most n at a time, in order of arrival, and a failure frees its slot', async () => {
  const limit = createLimiter(2);
  let active = 0;
  let most = 0;
  const started: number[] = [];
  const gates = new Map<number, () => void>();
  const job = (i: number, fail = false) =>
    limit.run(async () => {
      started.push(i);
      active++;
      most = Math.max(most, active);
      await new Promise<void>((r) => gates.set(i, r));
      active--;
      if (fail) throw new Error(`job ${i} failed`);
      return i;
    });
  const runs = [job(0, true), job(1), job(2), job(3)];
  const settled = Promise.allSettled(runs);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, [0, 1], 'two run, two wait');
  gates.get(0)!();
  await assert.rejects(runs[0]!, /job 0 failed/);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, [0, 1, 2], 'the failed one freed its slot for the next in line');
  for (const i of [1, 2]) gates.get(i)!();
  await runs[2];
  await new Promise((r) => setImmediate(r));
  gates.get(3)!();
  const results = await settled;
  assert.deepEqual(results.slice(1).map((r) => (r.status === 'fulfilled' ? r.value : null)), [1, 2, 3]);
  assert.equal(most, 2);
  assert.throws(() => createLimiter(0), /n must be a positive integer, got 0/);
});
