import assert from 'node:assert/strict';
import test from 'node:test';
import { createRowCache } from '../daemon/store/row-cache.ts';

// A load whose answer the test releases, to overlap it with writes.
function held<T>(value: T) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  return {
    load: async () => {
      calls++;
      await gate;
      return value;
    },
    release: () => release(),
    calls: () => calls,
  };
}

const copy = (r: { v: number }) => ({ ...r });

test('a row read once is answered from memory, as a copy', async () => {
  const cache = createRowCache({ max: 10, copy });
  let loads = 0;
  const load = async () => ({ v: ++loads });
  const a = await cache.read('a', load);
  const b = await cache.read('a', load);
  assert.deepEqual([a, b, loads], [{ v: 1 }, { v: 1 }, 1]);
  b!.v = 99;
  assert.equal((await cache.read('a', load))!.v, 1, 'changing a copy does not change the kept row');
  assert.equal(await cache.read('none', async () => null), null);
  assert.equal(await cache.read('none', async () => ({ v: 7 })).then((r) => r!.v), 7, 'a missing row is not kept as missing');
});

test('a read that overlapped a write of its row is not kept; before and after the write, the row is read again', async () => {
  const cache = createRowCache({ max: 10, copy });
  await cache.read('a', async () => ({ v: 1 }));
  let wrote!: () => void;
  const writing = cache.writing('a', () => new Promise<void>((r) => (wrote = r)));
  const during = held({ v: 1 }); // what the store still said while the write was in flight
  const read = cache.read('a', during.load);
  during.release();
  assert.deepEqual(await read, { v: 1 });
  assert.equal(during.calls(), 1, 'the kept row was forgotten as the write began');
  wrote();
  await writing;
  assert.deepEqual(await cache.read('a', async () => ({ v: 2 })), { v: 2 }, 'the read during the write was not kept');
  assert.deepEqual(await cache.read('a', async () => ({ v: 3 })), { v: 2 }, 'a read after the write is kept');
});

test('a write that fails still forgets its row; other rows are kept', async () => {
  const cache = createRowCache({ max: 10, copy });
  await cache.read('a', async () => ({ v: 1 }));
  await cache.read('b', async () => ({ v: 1 }));
  await assert.rejects(cache.writing('a', async () => Promise.reject(new Error('disk full'))), /disk full/);
  assert.deepEqual(await cache.read('a', async () => ({ v: 2 })), { v: 2 });
  assert.deepEqual(await cache.read('b', async () => ({ v: 2 })), { v: 1 });
});

test('forgetAll and writingAll forget every row, and a read that overlapped them is not kept', async () => {
  const cache = createRowCache({ max: 10, copy });
  await cache.read('a', async () => ({ v: 1 }));
  const during = held({ v: 1 });
  const read = cache.read('b', during.load);
  cache.forgetAll();
  during.release();
  await read;
  assert.deepEqual(await cache.read('a', async () => ({ v: 2 })), { v: 2 });
  assert.deepEqual(await cache.read('b', async () => ({ v: 2 })), { v: 2 });
  assert.equal(await cache.writingAll(async () => 'done'), 'done');
  assert.deepEqual(await cache.read('a', async () => ({ v: 3 })), { v: 3 });
});

test('the oldest row goes first past max; a bad max is refused, naming it', async () => {
  const cache = createRowCache({ max: 2, copy });
  for (const id of ['a', 'b', 'c']) await cache.read(id, async () => ({ v: 1 }));
  assert.deepEqual(await cache.read('a', async () => ({ v: 2 })), { v: 2 }, 'a was let go');
  assert.deepEqual(await cache.read('c', async () => ({ v: 2 })), { v: 1 });
  assert.throws(() => createRowCache({ max: 0, copy }), /max must be a positive integer, got 0/);
});
