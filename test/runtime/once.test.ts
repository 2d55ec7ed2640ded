import assert from 'node:assert/strict';
import test from 'node:test';
import { once } from '../../daemon/runtime/once.ts';

// close() is called from several places (a signal, a failed start, the test's t.after):
// the work runs once and every caller waits for its end.
test('once: the work runs at the first call; a second caller, early or late, waits on that same work', async () => {
  let runs = 0;
  let finish!: () => void;
  let finished = false;
  const close = once(async () => {
    runs++;
    await new Promise<void>((r) => (finish = r));
    finished = true;
  });
  const first = close();
  const second = close();
  assert.equal(runs, 1);
  assert.equal(first, second, 'the same promise');
  finish();
  await second;
  assert.equal(finished, true, 'the second caller returned only once the work was done');
  await close();
  assert.equal(runs, 1, 'a late call does not run it again');
});

test('once: a failed close fails the same way for every caller and is not run again', async () => {
  let runs = 0;
  const close = once(async () => {
    runs++;
    throw new Error(`close failed ${runs}`);
  });
  await assert.rejects(close(), /close failed 1/);
  await assert.rejects(close(), /close failed 1/);
  assert.equal(runs, 1);
});
