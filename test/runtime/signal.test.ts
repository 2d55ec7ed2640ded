import assert from 'node:assert/strict';
import test from 'node:test';
import { wakeOn } from '../../daemon/runtime/follow.ts';
import { createSignal } from '../../daemon/runtime/signal.ts';

test('signal: changed(key) calls the listeners of that key and the any-key listeners, with the key', () => {
  const s = createSignal<string>();
  const calls: string[] = [];
  s.onChange('a', (k) => calls.push(`a:${k}`));
  s.onChange('b', (k) => calls.push(`b:${k}`));
  s.onAnyChange((k) => calls.push(`any:${k}`));
  s.changed('a');
  s.changed('c');
  assert.deepEqual(calls, ['a:a', 'any:a', 'any:c']);
});

test('signal: what onChange returns stops that listener only, and twice is harmless', () => {
  const s = createSignal<number>();
  const calls: string[] = [];
  const fn = (k: number) => calls.push(`fn:${k}`);
  const first = s.onChange(1, fn);
  s.onChange(1, fn); // the same function twice: two registrations
  const any = s.onAnyChange((k) => calls.push(`any:${k}`));
  assert.equal(s.listenerCount(1), 2);
  assert.equal(s.listenerCount(), 3);
  first();
  first();
  s.changed(1);
  assert.deepEqual(calls, ['fn:1', 'any:1']);
  any();
  s.changed(1);
  assert.deepEqual(calls, ['fn:1', 'any:1', 'fn:1']);
  assert.equal(s.listenerCount(), 1);
});

test('signal: a listener that stops itself (or another) while called does not disturb this change', () => {
  const s = createSignal<string>();
  const calls: string[] = [];
  const stops: Array<() => void> = [];
  stops.push(s.onChange('k', () => (calls.push('one'), stops.forEach((stop) => stop()))));
  stops.push(s.onChange('k', () => calls.push('two')));
  s.changed('k');
  s.changed('k');
  assert.deepEqual(calls, ['one', 'two']);
  assert.equal(s.listenerCount(), 0);
});

test('wakeOn: a change after reset() wakes wait(); one that came before wait() makes it return at once; abort wakes it; stop() lets go', async () => {
  const s = createSignal<string>();
  const abort = new AbortController();
  const wake = wakeOn(abort.signal, (poke) => [s.onChange('x', poke)]);
  wake.reset();
  s.changed('x');
  await wake.wait(); // the change came before the wait: no hang

  wake.reset();
  let woke = false;
  const waiting = wake.wait().then(() => (woke = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(woke, false, 'nothing changed since reset');
  s.changed('y');
  await new Promise((r) => setImmediate(r));
  assert.equal(woke, false, 'another key does not wake it');
  s.changed('x');
  await waiting;

  wake.reset();
  const aborted = wake.wait();
  abort.abort();
  await aborted;
  wake.reset();
  await wake.wait(); // aborted: never waits again

  assert.equal(s.listenerCount(), 1);
  wake.stop();
  assert.equal(s.listenerCount(), 0);
});
