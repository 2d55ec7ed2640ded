// One team stream (DESIGN §14.2): on a shared store events commit in seq order, whichever daemon
// records them, so a follower reading `seq > last` never skips one that commits late.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test, type TestContext } from 'node:test';
import { pino } from 'pino';
import type { GroveEvent } from '../../schemas/event.ts';
import { openStore } from '../../daemon/store/db.ts';
import { eventsTable, type EventsTable } from '../../daemon/store/events.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { until } from '../helpers/store.ts';

const P = '00000000-0000-4000-8000-000000000001';

// Two daemons' stores on one database, each recording as its own host.
async function twoHosts(t: TestContext): Promise<{ a: EventsTable; b: EventsTable; look: EventsTable; query: (sql: string) => Promise<any[]> }> {
  const url = await freshDatabase();
  const open = async (host: string) => {
    const store = await openStore({ dataDir: tmpdir(), databaseUrl: url, log: pino({ level: 'silent' }) });
    t.after(() => store.close());
    return { store, events: eventsTable(store.db, () => {}, { hostId: host, shared: store.shared }) };
  };
  const a = await open('00000000-0000-4000-8000-00000000000a');
  const b = await open('00000000-0000-4000-8000-00000000000b');
  // A store runs one statement at a time: the follower (a third daemon) reads through its own.
  const look = await open('00000000-0000-4000-8000-00000000000c');
  return { a: a.events, b: b.events, look: look.events, query: async (sql) => (await look.store.db.query<any>(sql)).rows };
}

const event = (n: number) => ({ type: 'project.added' as const, project_id: P, data: { n } });

// What a follower sees: each page after the last seq it saw.
function follower(events: EventsTable) {
  const seen: GroveEvent[] = [];
  return {
    seen,
    async read(): Promise<void> {
      for (;;) {
        const page = await events.page({}, seen.at(-1)?.seq ?? 0, 1000);
        seen.push(...page);
        if (page.length < 1000) return;
      }
    },
  };
}

test('a transaction that took its seq first and commits last is not skipped: the later one waits for it', async (t) => {
  const { a, b, look, query } = await twoHosts(t);
  const f = follower(look);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let recorded!: () => void;
  const first = new Promise<void>((resolve) => (recorded = resolve));
  // A records, then holds its transaction open; B records and would commit at once.
  const slow = a.tx(async (_tx, record) => {
    await record(event(1));
    recorded();
    await held;
  });
  await first;
  let fastDone = false;
  const fast = b.tx(async (_tx, record) => record(event(2))).then(() => (fastDone = true));
  // B has either committed (the bug) or waits for A's turn: then the follower reads.
  await until(async () => fastDone || (await query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).length > 0, "B's commit or its wait");
  await f.read();
  release();
  await Promise.all([slow, fast]);
  await f.read();
  const table = (await query('SELECT seq FROM events ORDER BY seq')).map((r) => Number(r.seq));
  assert.deepEqual(
    f.seen.map((e) => e.seq),
    table,
  );
  assert.deepEqual(
    f.seen.map((e) => (e.data as any).n),
    [1, 2],
  );
  assert.deepEqual(
    f.seen.map((e) => e.host_id),
    ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b'],
    'each event says which host recorded it',
  );
});

test('two hosts writing at once: a follower sees every event exactly once, in increasing seq, no gap against the table', async (t) => {
  const { a, b, look, query } = await twoHosts(t);
  const f = follower(look);
  let writing = true;
  const following = (async () => {
    while (writing) await f.read();
  })();
  let n = 0;
  // Transactions of one or more events, with turns of the event loop between statements so
  // that they interleave differently on each run; some roll back (their seqs are never seen).
  const writer = (events: EventsTable) => async () => {
    for (let i = 0; i < 25; i++) {
      await events
        .tx(async (_tx, record) => {
          for (let k = 0; k <= i % 3; k++) {
            await record(event(++n));
            await new Promise((resolve) => setImmediate(resolve));
          }
          if (i % 7 === 6) throw new Error('rolled back');
        })
        .catch((err: Error) => assert.equal(err.message, 'rolled back'));
    }
  };
  await Promise.all([a, b, a, b].map((events) => writer(events)()));
  writing = false;
  await following;
  await f.read();
  const seqs = f.seen.map((e) => e.seq);
  const table = (await query('SELECT seq FROM events ORDER BY seq')).map((r) => Number(r.seq));
  assert.ok(table.length > 100, `${table.length} events`);
  assert.deepEqual(seqs, table, 'the follower saw the table, in order, each once');
});
