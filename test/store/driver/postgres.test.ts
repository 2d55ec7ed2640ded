// The PostgreSQL driver (daemon/store/driver/postgres.ts) alone, on a real PostgreSQL: the one this
// process starts (test/helpers/postgres.ts), under `npm run test:postgres` and under plain
// `npm test` alike, since a driver without its server tests nothing (see docs/decisions/tests.md).
// What both drivers share (rows, types, counts, codes, concurrent migration) is compared in
// test/postgres/store.test.ts; the daemon refusing an unreachable store in test/postgres/unreachable.test.ts.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import test, { type TestContext } from 'node:test';
import pg from 'pg';
import { openPostgresStore, redactUrl } from '../../../daemon/store/driver/postgres.ts';
import { StoreUnreachableError, type Store } from '../../../daemon/store/store.ts';
import { freshDatabase, postgresServer } from '../../helpers/postgres.ts';
import { memoryLog } from '../../helpers/store.ts';

// One database for the file (each new one costs a CREATE DATABASE and every migration): the
// first test opens it new; each test's tables have names of their own.
let database: Promise<string> | null = null;
const shared = () => (database ??= freshDatabase());

async function open(t: TestContext, url?: string) {
  const { log, records } = memoryLog();
  const dbUrl = url ?? (await shared());
  const store = await openPostgresStore({ url: dbUrl, log });
  t.after(() => store.close());
  return { store, records, url: dbUrl };
}

// A plain connection of the test's own, beside the store's.
async function admin(t: TestContext, url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  t.after(() => c.end());
  return c;
}

// The store's connections on the server, by application name.
const connections = async (c: pg.Client, name: string) =>
  Number((await c.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [name])).rows[0].n);

const unreachable = (detail: RegExp) => (err: unknown) => {
  assert.ok(err instanceof StoreUnreachableError, String(err));
  assert.match(err.message, detail);
  return true;
};

test('redactUrl shows the URL without its password, wherever it is given; an unparsable one is not shown at all', () => {
  assert.equal(redactUrl('postgresql://grove:s3cret@db.example:5433/grove'), 'postgresql://grove:***@db.example:5433/grove');
  assert.equal(redactUrl('postgres://db.example/grove?user=g&password=s3cret&sslmode=require'), 'postgres://db.example/grove?user=g&password=***&sslmode=require');
  assert.equal(redactUrl('postgresql://grove@db.example/grove'), 'postgresql://grove@db.example/grove', 'nothing to hide');
  assert.equal(redactUrl('not a url s3cret'), 'the database_url');
});

test('open: a port nothing listens on, a database that does not exist and a wrong password fail with the reason and no password; nothing stays connected', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
  const silent = memoryLog().log;
  await assert.rejects(
    openPostgresStore({ url: `postgresql://grove:Pa55word@127.0.0.1:${port}/grove`, log: silent }),
    unreachable(new RegExp(`^cannot reach the store at postgresql://grove:\\*\\*\\*@127\\.0\\.0\\.1:${port}/grove: .*ECONNREFUSED`)),
  );
  const server = await postgresServer();
  const missing = server.url('no_such_db');
  await assert.rejects(openPostgresStore({ url: missing, log: silent }), (err: Error) => {
    assert.match(err.message, /database "no_such_db" does not exist/);
    assert.ok(!err.message.includes(server.password), err.message);
    return true;
  });
  const url = await shared();
  const wrong = url.replace(`:${server.password}@`, ':Wr0ng-pa55@');
  await assert.rejects(openPostgresStore({ url: wrong, log: silent }), (err: Error) => /password authentication failed/.test(err.message) && !err.message.includes('Wr0ng-pa55'));
  const c = await admin(t, url);
  assert.equal(await connections(c, 'grove'), 0, 'the pool of a failed open is ended');
});

test('open migrates a new database and logs where the store is without its password; opening it again applies nothing', async (t) => {
  const first = await open(t);
  const applied = first.records.filter((r) => r.msg === 'migration applied').map((r) => r.migration);
  const { rows } = await first.store.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version');
  assert.ok(rows.length > 0);
  assert.deepEqual(applied, rows.map((r) => r.name), 'each migration in order, recorded');
  const opened = first.records.find((r) => r.msg === 'store opened on PostgreSQL');
  assert.equal(opened?.store, redactUrl(first.url));
  assert.ok(!JSON.stringify(first.records).includes((await postgresServer()).password), 'no password in the log');
  assert.equal(first.store.shared, true);

  const again = await open(t, first.url);
  assert.deepEqual(again.records.filter((r) => r.msg === 'migration applied'), []);
});

test('times are read and written in UTC whatever the server’s zone', async (t) => {
  const url = await shared();
  const c = await admin(t, url);
  await c.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET timezone = 'Pacific/Kiritimati'`);
  const { store } = await open(t, url);
  const { rows } = await store.db.query<{ shown: string; zone: string; at: Date }>(
    `SELECT '2026-01-02 03:04:05+00'::timestamptz::text AS shown, current_setting('TimeZone') AS zone, '2026-01-02T03:04:05Z'::timestamptz AS at`,
  );
  assert.deepEqual(rows[0], { shown: '2026-01-02 03:04:05+00', zone: 'UTC', at: new Date('2026-01-02T03:04:05Z') });
});

test('statements take turns in the order asked: a read asked after a write sees it, also while a transaction holds', async (t) => {
  const { store } = await open(t);
  await store.db.query('CREATE TABLE turns (n int)');
  const order: string[] = [];
  let letGo!: () => void;
  const held = new Promise<void>((r) => (letGo = r));
  const tx = store.db.transaction(async (q) => {
    await q.query('INSERT INTO turns VALUES (1)');
    order.push('tx wrote');
    await held;
    await q.query('INSERT INTO turns VALUES (2)');
    order.push('tx done');
  });
  const write = store.db.query('INSERT INTO turns VALUES (3)').then(() => order.push('write'));
  const read = store.db.query<{ n: number }>('SELECT n FROM turns ORDER BY n').then((r) => (order.push('read'), r.rows.map((x) => x.n)));
  // Nothing behind the transaction runs before it ends, though the pool has a spare connection.
  await new Promise((r) => setImmediate(r));
  letGo();
  await tx;
  assert.deepEqual(await read, [1, 2, 3]);
  await write;
  assert.deepEqual(order, ['tx wrote', 'tx done', 'write', 'read']);
});

test('a batch is one transaction: all of it is stored, or none of it when one statement fails (with its code); it takes its turn as a transaction does', async (t) => {
  const { store } = await open(t);
  await store.db.query('CREATE TABLE b (n int PRIMARY KEY)');
  const asked = store.db.batch([
    { sql: 'INSERT INTO b VALUES ($1)', params: [1] },
    { sql: 'INSERT INTO b SELECT n + 1 FROM b', params: [] },
  ]);
  const read = store.db.query<{ n: number }>('SELECT n FROM b ORDER BY n');
  await asked;
  assert.deepEqual((await read).rows.map((r) => r.n), [1, 2], 'a read asked after the batch sees all of it');
  await assert.rejects(
    store.db.batch([
      { sql: 'INSERT INTO b VALUES ($1)', params: [3] },
      { sql: 'INSERT INTO b VALUES ($1)', params: [1] },
    ]),
    (err: Error & { code?: string }) => err.code === '23505',
  );
  assert.deepEqual((await store.db.query<{ n: number }>('SELECT n FROM b ORDER BY n')).rows.map((r) => r.n), [1, 2], 'nothing of the failed batch was kept');
});

test('a statement cut off by the server is a StoreUnreachableError, and so at once is one waiting behind it; the next one runs on a new connection', async (t) => {
  const { store, url } = await open(t);
  const c = await admin(t, url);
  const cut = store.db.query('SELECT pg_sleep(30)');
  const behind = store.db.query('SELECT 1 AS one');
  // Once the sleep runs: the server ends that connection (as a shutdown does, 57P01).
  for (;;) {
    const { rows } = await c.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'grove' AND query = 'SELECT pg_sleep(30)' AND state = 'active'`);
    if (rows.length > 0) {
      await c.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      break;
    }
  }
  const started = Date.now();
  await assert.rejects(cut, unreachable(/^the store at postgresql:\/\/grove:\*\*\*@.* cannot be reached: terminating connection/));
  const err = await behind.then(() => null, (e: unknown) => e);
  assert.ok(err instanceof StoreUnreachableError, 'the statement asked behind it fails with it');
  assert.ok(Date.now() - started < 2000, 'without a wait of its own');
  assert.deepEqual((await store.db.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'the store recovers by itself');
});

// The connection a transaction holds, cut by the server between two of its statements (while
// the daemon does other work): the server's word arrives with no statement to take it.
test('a transaction whose connection is cut between statements fails unreachable, nothing of it is kept, and the process goes on; a statement error rolls back and keeps its code', async (t) => {
  const { store, url, records } = await open(t);
  const c = await admin(t, url);
  await store.db.query('CREATE TABLE t (n int PRIMARY KEY)');
  await assert.rejects(
    store.db.transaction(async (q) => {
      await q.query('INSERT INTO t VALUES (1)');
      const { rows } = await c.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'grove' AND state = 'idle in transaction' AND datname = current_database()`);
      assert.equal(rows.length, 1);
      await c.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      // The backend says so and exits: once it is gone, its word has been sent.
      while ((await c.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0].pid])).rows.length > 0);
      await new Promise((r) => setImmediate(r));
      await q.query('INSERT INTO t VALUES (2)');
    }),
    unreachable(/cannot be reached/),
  );
  assert.ok(records.some((r) => r.msg === 'a store connection failed' && r.err.code === '57P01'), 'the lost connection is logged');
  await assert.rejects(
    store.db.transaction(async (q) => {
      await q.query('INSERT INTO t VALUES (5)');
      await q.query('INSERT INTO t VALUES (5)');
    }),
    (err: { code?: string }) => err.code === '23505' && !(err instanceof StoreUnreachableError),
  );
  assert.equal(await store.db.transaction(async (q) => (await q.query('INSERT INTO t VALUES (7), (8)')).affectedRows), 2);
  assert.deepEqual((await store.db.query('SELECT n FROM t ORDER BY n')).rows, [{ n: 7 }, { n: 8 }]);
});

test('notify reaches a listener; close ends the pool and the listening connection, once however often it is called', async (t) => {
  const url = await shared();
  const store: Store = await openPostgresStore({ url, log: memoryLog().log });
  const c = await admin(t, url);
  const heard = new Promise<string | null>((resolve) => store.listen('grove_t', resolve));
  // The listening connection opens at the first listener: notify until it hears.
  let got: string | null | undefined;
  void heard.then((p) => (got = p));
  while (got === undefined) {
    await store.notify('grove_t', 'hello');
    await Promise.race([heard, new Promise((r) => setTimeout(r, 50))]);
  }
  assert.equal(got, 'hello');
  assert.equal(await connections(c, 'grove listen'), 1);
  await Promise.all([store.close(), store.close()]);
  assert.equal(await connections(c, 'grove listen'), 0);
  assert.equal(await connections(c, 'grove'), 0);
  await assert.rejects(store.db.query('SELECT 1'));
});
