// Notifications between daemons of one PostgreSQL (DESIGN §14.2): a NOTIFY from one store's
// daemon wakes another's listener; a listening connection the server drops is opened again and
// its listeners told they may have missed something.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, test } from 'node:test';
import { pino } from 'pino';
import { openStore, type Store } from '../../daemon/store/db.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const silent = pino({ level: 'silent' });

async function open(url: string): Promise<Store> {
  const store = await openStore({ dataDir: tmpdir(), databaseUrl: url, log: silent });
  after(() => store.close());
  return store;
}

// The next payload `fn` gets on `channel`, or fails after a deadline.
function next(store: Store, channel: string, want: (p: string | null) => boolean = () => true): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`nothing on ${channel}`));
    }, 10_000);
    const stop = store.listen(channel, (p) => {
      if (!want(p)) return;
      clearTimeout(timer);
      stop();
      resolve(p);
    });
  });
}

// LISTEN is sent once the listening connection is open: notify until the listener hears.
async function notifyUntilHeard(from: Store, to: Store, channel: string, payload: string): Promise<void> {
  const heard = next(to, channel, (p) => p === payload);
  let done = false;
  void heard.finally(() => (done = true));
  while (!done) {
    await from.notify(channel, payload);
    await Promise.race([heard, new Promise((r) => setTimeout(r, 100))]);
  }
  await heard;
}

test('a notification from one daemon reaches the listener of another; its own too', async () => {
  const url = await freshDatabase();
  const a = await open(url);
  const b = await open(url);
  assert.equal(a.shared, true);
  await notifyUntilHeard(a, b, 'grove_test', 'hello');
  const own = next(a, 'grove_test', (p) => p === 'mine');
  await notifyUntilHeard(a, a, 'grove_warm', 'x');
  await a.notify('grove_test', 'mine');
  assert.equal(await own, 'mine');
  // A removed listener hears nothing more.
  let heard = 0;
  const stop = b.listen('grove_other', () => heard++);
  stop();
  await notifyUntilHeard(a, b, 'grove_test', 'after');
  assert.equal(heard, 0);
});

test('a listening connection the server drops is opened again: listeners get null, then notifications again', async () => {
  const url = await freshDatabase();
  const a = await open(url);
  const b = await open(url);
  await notifyUntilHeard(a, b, 'grove_test', 'before');
  const missed = next(b, 'grove_test', (p) => p === null);
  await a.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'grove listen' AND pid <> pg_backend_pid()`);
  assert.equal(await missed, null);
  await notifyUntilHeard(a, b, 'grove_test', 'after');
});
