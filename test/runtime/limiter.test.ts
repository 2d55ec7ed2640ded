import assert from 'node:assert/strict';
import test from 'node:test';
import { createKeyedLimiter, createLimiter } from '../../daemon/runtime/limiter.ts';

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

// A job that runs until its gate is opened.
function gated() {
  const gates: Array<() => void> = [];
  const started: string[] = [];
  const job = (name: string) => async () => {
    started.push(name);
    await new Promise<void>((r) => gates.push(r));
    return name;
  };
  return { gates, started, job };
}

test('one whose signal aborts while it waits leaves the line without running, and the slot goes to the next', async () => {
  const limit = createLimiter(1);
  const { gates, started, job } = gated();
  const first = limit.run(job('first'));
  const gone = new AbortController();
  const left = limit.run(job('left'), gone.signal);
  const next = limit.run(job('next'));
  await new Promise((r) => setImmediate(r));
  gone.abort(new Error('the client has gone'));
  await assert.rejects(left, /the client has gone/);
  gates.shift()!();
  assert.equal(await first, 'first');
  await new Promise((r) => setImmediate(r));
  gates.shift()!();
  assert.equal(await next, 'next');
  assert.deepEqual(started, ['first', 'next']);
  assert.equal(limit.idle(), true);
  await assert.rejects(limit.run(job('late'), gone.signal), /the client has gone/, 'an aborted signal does not queue');
});

test('a keyed limiter: n at a time per key, and keys never wait for each other', async () => {
  const limit = createKeyedLimiter(1);
  const { gates, started, job } = gated();
  const a1 = limit.run('a', job('a1'));
  const a2 = limit.run('a', job('a2'));
  const b1 = limit.run('b', job('b1'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['a1', 'b1'], 'a2 waits for a1; b1 does not');
  gates.splice(0).forEach((g) => g());
  assert.deepEqual(await Promise.all([a1, b1]), ['a1', 'b1']);
  await new Promise((r) => setImmediate(r));
  gates.splice(0).forEach((g) => g());
  assert.equal(await a2, 'a2');
});
