import assert from 'node:assert/strict';
import test from 'node:test';
import { createRegistry } from '../../daemon/runtime/registry.ts';
import { waitFor } from '../../daemon/runtime/wait.ts';

// A source of wake-ups by key, as the waits' callers have (the registry under a signal).
function source() {
  const reg = createRegistry<string, () => void>();
  return { reg, poke: (key: string) => reg.get(key).forEach((f) => f()) };
}

test('a wait ends at the first wake of its key, not of another, and lets go of every registration', async () => {
  const s = source();
  const w = waitFor((wake) => [s.reg.add('a', wake), s.reg.add('b', wake)], { ms: 60_000 });
  s.poke('c');
  assert.equal(s.reg.count(), 2, 'still waiting');
  s.poke('b');
  assert.equal(await w.done, 'woken');
  assert.equal(s.reg.count(), 0, 'nothing left registered');
  s.poke('a'); // a late wake-up changes nothing
  assert.equal(await w.done, 'woken');
});

test('a wake-up between the call and the await is not missed', async () => {
  const s = source();
  const w = waitFor((wake) => [s.reg.add('k', wake)]);
  s.poke('k'); // before anyone awaits: the read the caller makes next would already see it
  assert.equal(await w.done, 'woken');
});

test('with no wake-up, the wait ends after ms; an abort ends it at once, also one that came before', async () => {
  const s = source();
  const t0 = Date.now();
  const w = waitFor((wake) => [s.reg.add('k', wake)], { ms: 50 });
  assert.equal(await w.done, 'timeout');
  assert.ok(Date.now() - t0 >= 45);
  assert.equal(s.reg.count(), 0);

  const ac = new AbortController();
  const a = waitFor((wake) => [s.reg.add('k', wake)], { ms: 60_000, signal: ac.signal });
  ac.abort();
  assert.equal(await a.done, 'aborted');
  assert.equal(s.reg.count(), 0);
  const b = waitFor((wake) => [s.reg.add('k', wake)], { signal: ac.signal });
  assert.equal(await b.done, 'aborted', 'an abort before the wait');
  assert.equal(s.reg.count(), 0);
});

test('stop ends the wait and lets go; a timer stopped keeps no handle (the test process can end)', async () => {
  const s = source();
  const w = waitFor((wake) => [s.reg.add('k', wake)], { ms: 60 * 60_000 });
  w.stop();
  w.stop();
  assert.equal(await w.done, 'woken');
  assert.equal(s.reg.count(), 0);
});
