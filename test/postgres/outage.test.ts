// The PostgreSQL driver with its server stopped and started again under it (DESIGN §14.2
// "Faults"): every statement fails at once with StoreUnreachableError, none hangs, and once the
// server is back statements and the listening connection work again without reopening the store.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { pino } from 'pino';
import { openStore } from '../../daemon/store/db.ts';
import { StoreUnreachableError } from '../../daemon/store/store.ts';
import { ownPostgresServer } from '../helpers/postgres.ts';
import { until } from '../helpers/store.ts';

const silent = pino({ level: 'silent' });

// `work` rejects with StoreUnreachableError within a few seconds.
async function unreachable(what: string, work: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  await assert.rejects(work, (err: unknown) => {
    assert.ok(err instanceof StoreUnreachableError, `${what}: ${String(err)}`);
    assert.doesNotMatch(err.message, /password=|:[0-9a-f]{24}@/);
    return true;
  });
  assert.ok(Date.now() - started < 4000, `${what} failed in ${Date.now() - started} ms`);
}

for (const mode of ['fast', 'immediate'] as const) {
  test(`a server stopped (${mode}) under an open store: statements fail at once as unreachable; started again, the store recovers by itself`, async (t) => {
    const pg = await ownPostgresServer(t);
    const store = await openStore({ dataDir: tmpdir(), databaseUrl: await pg.freshDatabase(), log: silent });
    t.after(() => store.close());
    await store.db.query('CREATE TABLE t (n int PRIMARY KEY)');
    // The test server syncs nothing: on disk before an immediate stop.
    await store.db.query('CHECKPOINT');
    const heard: Array<string | null> = [];
    store.listen('grove_outage', (p) => heard.push(p));
    await until(async () => {
      await store.notify('grove_outage', 'before');
      return heard.includes('before');
    }, 'the listener hears');

    pg.stop(mode);
    // Several at once, as requests would ask: each fails, none waits for the others' timeouts.
    await Promise.all([
      unreachable('a query', () => store.db.query('SELECT 1')),
      unreachable('a transaction', () => store.db.transaction((tx) => tx.query('INSERT INTO t VALUES (1)'))),
      unreachable('a notify', () => store.notify('grove_outage', 'lost')),
      unreachable('another query', () => store.db.query('SELECT n FROM t')),
    ]);
    await unreachable('a query after the failures', () => store.db.query('SELECT 1'));

    pg.start();
    await until(async () => (await store.db.query('SELECT 1').then(() => true, () => false)), 'a statement answered again', 30_000);
    await store.db.transaction((tx) => tx.query('INSERT INTO t VALUES (1)'));
    assert.deepEqual((await store.db.query<{ n: number }>('SELECT n FROM t')).rows, [{ n: 1 }], 'the failed transaction left nothing');
    // The listening connection came back by itself: listeners were told they may have missed something.
    await until(() => heard.includes(null), 'listeners told of a gap', 30_000);
    await until(async () => {
      await store.notify('grove_outage', 'after');
      return heard.includes('after');
    }, 'the listener hears again');
    assert.ok(!heard.includes('lost'));
  });
}

test('a server gone silent (its processes stopped, connections open): statements time out as unreachable together, not one after another; it recovers when it answers again', async (t) => {
  const pg = await ownPostgresServer(t);
  const store = await openStore({ dataDir: tmpdir(), databaseUrl: await pg.freshDatabase(), log: silent });
  t.after(() => store.close());
  await store.db.query('SELECT 1');

  pg.freeze();
  const started = Date.now();
  const failedAt: number[] = [];
  const failing = (what: string, work: () => Promise<unknown>) =>
    assert.rejects(work, (err: unknown) => {
      assert.ok(err instanceof StoreUnreachableError, `${what}: ${String(err)}`);
      failedAt.push(Date.now() - started);
      return true;
    });
  await Promise.all([
    failing('a query', () => store.db.query('SELECT 1')),
    failing('a transaction', () => store.db.transaction((tx) => tx.query('SELECT 1'))),
    failing('another query', () => store.db.query('SELECT 2')),
  ]);
  // Each within about one timeout of the server going silent, rather than one timeout each in turn.
  assert.ok(Math.max(...failedAt) < 9000, `failed after ${failedAt.join(', ')} ms`);
  // A new connection to a silent server times out too.
  const again = Date.now();
  await failing('a query on a new connection', () => store.db.query('SELECT 3'));
  assert.ok(Date.now() - again < 9000, `failed after ${Date.now() - again} ms`);

  pg.thaw();
  await until(async () => (await store.db.query('SELECT 1').then(() => true, () => false)), 'a statement answered again', 30_000);
});
