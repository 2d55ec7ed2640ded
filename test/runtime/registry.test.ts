import assert from 'node:assert/strict';
import test from 'node:test';
import { createRegistry } from '../../daemon/runtime/registry.ts';

test('registry: functions by key; each registration is its own entry, stopped once', () => {
  const r = createRegistry<string, () => string>();
  const f = () => 'f';
  const stop1 = r.add('a', f);
  const stop2 = r.add('a', f);
  r.add('b', () => 'g');
  assert.equal(r.count('a'), 2, 'the same function twice is two entries');
  assert.equal(r.count(), 3);
  assert.deepEqual(r.keys(), ['a', 'b']);
  assert.deepEqual(r.get('a').map((fn) => fn()), ['f', 'f']);
  assert.deepEqual(r.get('none'), []);
  stop1();
  stop1();
  assert.equal(r.count('a'), 1, 'a stop called twice stops one entry');
  stop2();
  assert.equal(r.has('a'), false, 'a key with none left is gone');
  assert.deepEqual(r.all().map((fn) => fn()), ['g']);
});

test('registry: what is read is a copy, so a listener may stop itself or add another while called', () => {
  const r = createRegistry<string, () => void>();
  const calls: string[] = [];
  const stop = r.add('k', () => {
    calls.push('first');
    stop();
    r.add('k', () => calls.push('added'));
  });
  r.add('k', () => calls.push('second'));
  for (const fn of r.get('k')) fn();
  assert.deepEqual(calls, ['first', 'second'], 'the one added while calling waits for the next');
  calls.length = 0;
  for (const fn of r.all()) fn();
  assert.deepEqual(calls, ['second', 'added']);
});

test('registry: clear empties it; a stop from before the clear leaves a new entry of the key alone', () => {
  const r = createRegistry<string, () => void>();
  const old = r.add('k', () => {});
  r.clear();
  assert.equal(r.count(), 0);
  r.add('k', () => {});
  old();
  assert.equal(r.count('k'), 1);
});
