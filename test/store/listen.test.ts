// Notifications on this daemon's own store (PGlite): delivered in process, to every listener of
// the channel, after notify() is called; none after a listener is removed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createListeners } from '../../daemon/store/listeners.ts';
import { openTestStore } from '../helpers/store.ts';
import { onPostgres } from '../helpers/postgres.ts';

test('notify reaches every listener of its channel, and only theirs', async (t) => {
  const { store } = await openTestStore((fn) => t.after(fn));
  assert.equal(store.shared, onPostgres);
  const got: string[] = [];
  const both = Promise.all(
    ['x', 'y'].map((who) => new Promise<void>((resolve) => store.listen('grove_unit', (p) => p === 'go' && (got.push(who), resolve())))),
  );
  const stop = store.listen('grove_unit', (p) => p === 'go' && got.push('removed'));
  stop();
  store.listen('grove_elsewhere', () => got.push('elsewhere'));
  // On PostgreSQL the LISTEN may not be in place yet: say it until both heard.
  let heard = false;
  void both.then(() => (heard = true));
  while (!heard) {
    await store.notify('grove_unit', 'go');
    await Promise.race([both, new Promise((r) => setTimeout(r, 100))]);
  }
  assert.deepEqual([...new Set(got)].sort(), ['x', 'y']);
});

test('channel names are SQL identifiers; a throwing listener does not stop the others', () => {
  const l = createListeners();
  assert.throws(() => l.add('Bad-Name', () => {}), /not a channel name/);
  const got: Array<string | null> = [];
  l.add('c', () => {
    throw new Error('boom');
  });
  l.add('c', (p) => got.push(p));
  l.add('d', (p) => got.push(`d:${p}`));
  l.deliver('c', 'one');
  l.deliverAll();
  assert.deepEqual(got, ['one', null, 'd:null']);
  assert.deepEqual(l.channels().sort(), ['c', 'd']);
});
