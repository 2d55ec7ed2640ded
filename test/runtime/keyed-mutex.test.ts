import assert from 'node:assert/strict';
import test from 'node:test';
import { createKeyedMutex } from '../../daemon/runtime/keyed-mutex.ts';

// A job that records its start and end and runs until its gate is opened.
function jobs() {
  const log: string[] = [];
  const gates = new Map<string, () => void>();
  const job = (name: string, fail = false) => async () => {
    log.push(`${name} start`);
    await new Promise<void>((r) => gates.set(name, r));
    log.push(`${name} end`);
    if (fail) throw new Error(`${name} failed`);
    return name;
  };
  return { log, job, open: (name: string) => gates.get(name)!() };
}

const tick = () => new Promise((r) => setImmediate(r));

test('keyed mutex: one key runs one job at a time in order of arrival, and a failure does not stop the next', async () => {
  const mutex = createKeyedMutex();
  const { log, job, open } = jobs();
  const a = mutex.run('p', job('a', true));
  const b = mutex.run('p', job('b'));
  const c = mutex.run('p', job('c'));
  await tick();
  assert.deepEqual(log, ['a start'], 'b and c wait for a');
  open('a');
  await assert.rejects(a, /a failed/);
  await tick();
  assert.deepEqual(log, ['a start', 'a end', 'b start']);
  open('b');
  assert.equal(await b, 'b');
  await tick();
  open('c');
  assert.equal(await c, 'c');
  assert.deepEqual(log, ['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
});

test('keyed mutex: different keys run side by side; a key used again after it went idle runs at once', async () => {
  const mutex = createKeyedMutex();
  const { log, job, open } = jobs();
  const p = mutex.run('p', job('p1'));
  const q = mutex.run('q', job('q1'));
  await tick();
  assert.deepEqual(log.sort(), ['p1 start', 'q1 start'], 'q does not wait for p');
  open('q1');
  open('p1');
  assert.deepEqual(await Promise.all([p, q]), ['p1', 'q1']);
  await tick();
  const again = mutex.run('p', job('p2'));
  await tick();
  assert.ok(log.includes('p2 start'));
  open('p2');
  assert.equal(await again, 'p2');
  // A job that throws synchronously is still a rejection of its own run, not of the mutex.
  await assert.rejects(mutex.run('p', () => { throw new Error('sync'); }), /sync/);
  assert.equal(await mutex.run('p', async () => 'after'), 'after');
});

test('keyed mutex: low-priority work waits while other work for its key waits, and runs once none does', async () => {
  const mutex = createKeyedMutex();
  const { log, job, open } = jobs();
  const a = mutex.run('p', job('a'));
  // Queued first, but low: the two that come after it go first.
  const refill = mutex.run('p', job('refill'), { low: true });
  const b = mutex.run('p', job('b'));
  const c = mutex.run('p', job('c'));
  // Another key's low work does not wait for this key.
  const other = mutex.run('q', job('other'), { low: true });
  await tick();
  assert.deepEqual(log, ['a start', 'other start']);
  open('a');
  await a;
  await tick();
  // Work arriving while b runs still goes before the waiting refill.
  const d = mutex.run('p', job('d'));
  open('b');
  await b;
  await tick();
  open('c');
  await c;
  await tick();
  open('d');
  await d;
  await tick();
  open('refill');
  assert.equal(await refill, 'refill');
  open('other');
  await other;
  assert.deepEqual(log.filter((l) => l.endsWith('start') && !l.startsWith('other')), ['a start', 'b start', 'c start', 'd start', 'refill start']);
  // A low job on an idle key runs at once.
  assert.equal(await mutex.run('p', async () => 'idle', { low: true }), 'idle');
});

test("keyed mutex: one whose signal aborts while it waits leaves the line without running, rejected with the signal's reason", async () => {
  const mutex = createKeyedMutex();
  const { log, job, open } = jobs();
  const a = mutex.run('p', job('a'));
  const stop = new AbortController();
  const b = mutex.run('p', job('b'), { signal: stop.signal });
  const c = mutex.run('p', job('c'));
  await tick();
  stop.abort(new Error('the bound ran out'));
  await assert.rejects(b, /the bound ran out/);
  open('a');
  assert.equal(await a, 'a');
  await tick();
  assert.deepEqual(log, ['a start', 'a end', 'c start'], 'b never ran; c has the key after a');
  open('c');
  assert.equal(await c, 'c');
  await assert.rejects(mutex.run('p', job('d'), { signal: AbortSignal.abort(new Error('already')) }), /already/);
  assert.equal(await mutex.run('p', async () => 'free'), 'free', 'nothing holds the key');
});
