import assert from 'node:assert/strict';
import test from 'node:test';
import { createCoalescer } from '../../daemon/runtime/coalesce.ts';

// A run that waits until the test lets it end.
function gate() {
  const opened: Array<() => void> = [];
  return {
    wait: () => new Promise<void>((r) => opened.push(r)),
    open: () => opened.shift()!(),
    get waiting() {
      return opened.length;
    },
  };
}

test('coalesce: runs asked for while one runs make exactly one more run, and every caller waits for it', async () => {
  const g = gate();
  const seen: number[] = [];
  let n = 0;
  const c = createCoalescer<string>(async () => {
    seen.push(++n);
    await g.wait();
  });
  const first = c.run('a');
  const second = c.run('a');
  const third = c.run('a');
  assert.equal(second, first, 'the running run answers');
  assert.equal(third, first);
  assert.deepEqual(seen, [1]);
  g.open();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, [1, 2], 'one more run, not two');
  assert.equal(g.waiting, 1);
  g.open();
  await third;
  assert.deepEqual(seen, [1, 2]);
  assert.equal(c.running('a'), undefined);
});

test('coalesce: a run asked for right as the last round ends starts anew (never lost)', async () => {
  let n = 0;
  let done!: Promise<void>;
  const c = createCoalescer<string>(() => {
    n++;
    return (done = Promise.resolve());
  });
  const first = c.run('k');
  // Called back just after the coalescer saw the round end (its await was there first), before
  // its own promise settles: the window where a "again" would be marked on a run that is over.
  const later = done.then(() => c.run('k'));
  await first;
  await (await later);
  assert.equal(n, 2, 'the late run ran');
});

test('coalesce: keys run in parallel; a throw rejects that run and drops its "again"', async () => {
  const g = gate();
  const seen: string[] = [];
  const c = createCoalescer<string>(async (key) => {
    seen.push(key);
    if (key === 'bad') throw new Error('boom');
    await g.wait();
  });
  const a = c.run('a');
  const bad = c.run('bad');
  c.run('bad').catch(() => {});
  await assert.rejects(bad, /boom/);
  assert.deepEqual(seen, ['a', 'bad'], 'the failed key does not go round again');
  assert.equal(c.running('bad'), undefined);
  g.open();
  await a;
  // A synchronous throw leaves no run behind either.
  const sync = createCoalescer<string>((() => {
    throw new Error('sync');
  }) as () => Promise<void>);
  await assert.rejects(sync.run('x'), /sync/);
  assert.equal(sync.running('x'), undefined);
});

test('coalesce: close waits for the running run, skips its "again", refuses new runs; twice is once', async () => {
  const g = gate();
  let n = 0;
  let ended = false;
  const c = createCoalescer<string>(async () => {
    n++;
    await g.wait();
    ended = true;
  });
  void c.run('a');
  void c.run('a');
  const closing = c.close();
  assert.equal(c.close(), closing, 'idempotent');
  let closed = false;
  void closing.then(() => (closed = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(closed, false, 'waits for the running one');
  g.open();
  await closing;
  assert.equal(ended, true);
  assert.equal(n, 1, 'no round after close');
  await c.run('a');
  assert.equal(n, 1, 'a run after close does nothing');
});
