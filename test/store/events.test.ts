// The events table (daemon/store/events.ts) alone on a real store: a change and its events in one
// transaction, handed to `published` once committed and in seq order; seq numbering under
// transactions at once; the recorder's host and the shared store's lock; the filter rule the query
// and the live tail share; pages after a cursor; pruning the oldest.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MAX_EVENT_SEQ, type GroveEvent } from '../../schemas/event.ts';
import { eventsTable, matches, type EventFilter, type NewEvent, type Recorder } from '../../daemon/store/events.ts';
import type { Db } from '../../daemon/store/db.ts';
import { openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

// One store for the file; the tests that need it empty open their own.
const s = await openTestStore(after);
const here: Recorder = { hostId: TEST_HOST_ID, shared: s.store.shared };

// An events table on `db` whose `published` keeps each batch it is handed, in the order handed.
function recording(db: Db = s.store.db, by: Recorder = here) {
  const batches: GroveEvent[][] = [];
  return { table: eventsTable(db, (events) => void batches.push(events), by), batches };
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
const seqs = (events: GroveEvent[]) => events.map((e) => e.seq);

test("a transaction's events are handed to published together once it has committed, as stored: seq after the last, one time, ids, host and data", async () => {
  const { table, batches } = recording();
  const before = await table.lastSeq();
  const project = randomUUID();
  const task = randomUUID();
  const session = randomUUID();
  const t0 = Date.now();
  const out = await table.tx(async (_tx, record) => {
    await record({ type: 'task.status', project_id: project, task_id: task, data: { status: 'ready', ports: { 3000: 3001 } } });
    await record({ type: 'session.created', project_id: project, task_id: task, session_id: session, data: { text: 'ünïcødé ✓ "quoted"', n: [1, null] } });
    assert.deepEqual(batches, [], 'nothing is published before the commit');
    return 'done';
  });
  const t1 = Date.now();
  assert.equal(out, 'done', 'tx returns what its function returned');

  assert.equal(batches.length, 1, 'one batch per transaction');
  const [first, second] = batches[0]!;
  assert.ok(first!.seq > before);
  assert.deepEqual(seqs(batches[0]!), [first!.seq, first!.seq + 1]);
  assert.deepEqual(
    [first!.type, first!.project_id, first!.task_id, first!.session_id, first!.host_id, first!.data],
    ['task.status', project, task, null, TEST_HOST_ID, { status: 'ready', ports: { 3000: 3001 } }],
  );
  assert.deepEqual([second!.session_id, second!.data], [session, { text: 'ünïcødé ✓ "quoted"', n: [1, null] }]);
  assert.equal(first!.at, second!.at, 'the time of the transaction');
  assert.ok(Date.parse(first!.at) >= t0 - 1000 && Date.parse(first!.at) <= t1 + 1000, `at ${first!.at}, between ${t0} and ${t1}`);
  assert.deepEqual(await table.page({}, before, 10), batches[0], 'what was published is what is stored');
  assert.equal(await table.lastSeq(), second!.seq);
});

test('a transaction that throws keeps neither its change nor its events and publishes nothing; one that records nothing publishes nothing', async () => {
  const { table, batches } = recording();
  const before = await table.lastSeq();
  const id = randomUUID();
  const failure = new Error('the change failed after its event');
  let rolledBack = 0;
  await assert.rejects(
    table.tx(async (tx, record) => {
      await tx.query(`INSERT INTO projects (id, name, path, host_id) VALUES ($1, $2, $3, $4)`, [id, `p-${id}`, `/nowhere/${id}`, TEST_HOST_ID]);
      await record({ type: 'project.added', project_id: id, data: { id } });
      rolledBack = Number((await tx.query<{ n: string | number }>('SELECT max(seq) AS n FROM events')).rows[0]!.n);
      throw failure;
    }),
    (err) => err === failure,
  );
  assert.deepEqual((await s.store.db.query('SELECT id FROM projects WHERE id = $1', [id])).rows, [], 'no change without its event');
  assert.deepEqual(await table.page({}, before, 10), [], 'no event without its change');
  assert.deepEqual(batches, []);

  assert.equal(await table.tx(async (tx) => (await tx.query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n), 1);
  assert.deepEqual(batches, [], 'published is not called with no events');

  await table.tx((_tx, record) => record({ type: 'project.added', project_id: id, data: {} }));
  assert.ok(rolledBack > before);
  assert.ok((await table.page({}, before, 10))[0]!.seq > rolledBack, 'the seq of a rolled-back event is not given again');
});

test('tx waits for published to finish before it resolves', async () => {
  const finished: number[] = [];
  const table = eventsTable(
    s.store.db,
    async (events) => {
      await nextTurn();
      await nextTurn();
      finished.push(...seqs(events));
    },
    here,
  );
  const before = await table.lastSeq();
  await table.tx((_tx, record) => record({ type: 'host.online', project_id: null, data: {} }));
  assert.deepEqual(finished, seqs(await table.page({}, before, 10)));
  assert.equal(finished.length, 1);
});

test("twenty transactions at once: seqs follow the last with no gap or duplicate, each transaction's events together, published in seq order", async () => {
  const { table, batches } = recording();
  const before = await table.lastSeq();
  const project = randomUUID();
  const counts = range(0, 20).map((i) => (i % 3) + 1);
  const total = counts.reduce((a, b) => a + b, 0);
  await Promise.all(
    counts.map((n, i) =>
      table.tx(async (_tx, record) => {
        for (let j = 0; j < n; j++) await record({ type: 'task.status', project_id: project, data: { i, j } });
      }),
    ),
  );
  // A rolled-back transaction may have left a gap before (a sequence is not transactional); none here.
  const first = batches[0]![0]!.seq;
  assert.ok(first > before);
  assert.deepEqual(seqs(batches.flat()), range(first, total), 'published in seq order, every seq once');
  assert.deepEqual(batches.map((b) => b.length).sort(), [...counts].sort());
  for (const b of batches) {
    assert.deepEqual(seqs(b), range(b[0]!.seq, b.length), "a transaction's events are contiguous");
    assert.deepEqual(b.map((e) => (e.data as { j: number }).j), range(0, b.length), 'in the order recorded');
    assert.ok(b.every((e) => (e.data as { i: number }).i === (b[0]!.data as { i: number }).i), 'of one transaction');
  }
  assert.deepEqual(seqs(await table.page({ project_id: project }, before, 1000)), range(first, total));
});

test("a shared store's recording transaction holds the events lock until it ends; an unshared store's takes no lock", async () => {
  const advisoryLocks = async (tx: Db) =>
    (await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted`)).rows[0]!.n;
  const shared = recording(s.store.db, { hostId: TEST_HOST_ID, shared: true }).table;
  const alone = recording(s.store.db, { hostId: TEST_HOST_ID, shared: false }).table;
  assert.equal(await shared.tx(advisoryLocks), 1);
  assert.equal(await alone.tx(advisoryLocks), 0);
  assert.equal(await s.store.db.transaction(advisoryLocks), 0, 'released with its transaction');
  // The lock does not stop the transaction recording.
  const before = await shared.lastSeq();
  await shared.tx((_tx, record) => record({ type: 'host.online', project_id: null, data: {} }));
  assert.equal((await shared.page({}, before, 10)).length, 1);
});

test('a recorder without a host records events with host_id null', async () => {
  const { table, batches } = recording(s.store.db, { hostId: null, shared: s.store.shared });
  const before = await table.lastSeq();
  await table.tx((_tx, record) => record({ type: 'project.removed', project_id: randomUUID(), data: null }));
  assert.equal(batches[0]![0]!.host_id, null);
  assert.equal(batches[0]![0]!.data, null, 'a JSON null is data too');
  assert.equal((await table.page({}, before, 1))[0]!.host_id, null);
  // The default recorder: no host, not shared.
  const plain = eventsTable(s.store.db, () => {});
  await plain.tx((_tx, record) => record({ type: 'project.removed', project_id: null, data: {} }));
  assert.equal((await plain.page({}, batches[0]![0]!.seq, 1))[0]!.host_id, null);
});

test('matches: an empty filter passes every event; a project or a task filter passes only the events of that id; both together only those of both', () => {
  const [p1, p2, t1, t2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const event = (project_id: string | null, task_id: string | null): GroveEvent => ({
    seq: 1, type: 'task.status', at: new Date().toISOString(), project_id, task_id, session_id: null, host_id: null, data: {},
  });
  const all = [event(p1, t1), event(p1, t2), event(p2, null), event(null, null)];
  const passing = (f: EventFilter) => all.map((e) => matches(e, f));
  assert.deepEqual(passing({}), [true, true, true, true]);
  assert.deepEqual(passing({ project_id: p1 }), [true, true, false, false]);
  assert.deepEqual(passing({ task_id: t2 }), [false, true, false, false]);
  assert.deepEqual(passing({ project_id: p1, task_id: t1 }), [true, false, false, false]);
  assert.deepEqual(passing({ project_id: p2, task_id: t1 }), [false, false, false, false]);
});

test('page: the events after a cursor in seq order, at most limit, filtered by the rule matches has; nothing after the newest or for an unknown id', async () => {
  const { table } = recording();
  const before = await table.lastSeq();
  const [p1, p2, t1, t2, t3] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const made: NewEvent[] = [
    { type: 'task.created', project_id: p1, task_id: t1, data: 1 },
    { type: 'task.created', project_id: p2, task_id: t3, data: 2 },
    { type: 'task.created', project_id: p1, task_id: t2, data: 3 },
    { type: 'host.online', project_id: null, data: 4 },
    { type: 'task.status', project_id: p1, task_id: t1, data: 5 },
    { type: 'project.added', project_id: p1, data: 6 },
    { type: 'task.status', project_id: p2, task_id: t3, data: 7 },
    { type: 'task.status', project_id: p1, task_id: t1, data: 8 },
  ];
  // One transaction per event, so that seq and the order made agree even on a shared store.
  for (const e of made) await table.tx((_tx, record) => record(e));
  const all = await table.page({}, before, 100);
  assert.deepEqual(all.map((e) => e.data), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(seqs(all), range(all[0]!.seq, 8));

  for (const f of [{ project_id: p1 }, { project_id: p2 }, { task_id: t1 }, { project_id: p1, task_id: t1 }, { project_id: p2, task_id: t1 }]) {
    assert.deepEqual(await table.page(f, before, 100), all.filter((e) => matches(e, f)), JSON.stringify(f));
  }
  assert.deepEqual((await table.page({ task_id: t1 }, before, 100)).map((e) => e.data), [1, 5, 8]);

  // A reader pages through with a cursor: each event once, in order.
  const read: GroveEvent[] = [];
  for (let cursor = before, page: GroveEvent[]; (page = await table.page({ project_id: p1 }, cursor, 2)).length > 0; cursor = page.at(-1)!.seq) {
    assert.ok(page.length <= 2);
    read.push(...page);
  }
  assert.deepEqual(read.map((e) => e.data), [1, 3, 5, 6, 8]);

  assert.deepEqual(await table.page({}, await table.lastSeq(), 10), []);
  assert.deepEqual(await table.page({}, MAX_EVENT_SEQ, 10), [], 'the largest cursor a query may name');
  assert.deepEqual(await table.page({ project_id: randomUUID() }, 0, 10), []);
  assert.deepEqual(await table.page({ task_id: randomUUID() }, 0, 10), []);
});

test('lastSeq is 0 on a store without events; prune deletes the oldest beyond the newest keep, at most batch at a time, and seq goes on from the newest', async (t) => {
  const own = await openTestStore((fn) => t.after(fn));
  const { table } = recording(own.store.db, { hostId: TEST_HOST_ID, shared: own.store.shared });
  assert.equal(await table.lastSeq(), 0);
  assert.deepEqual(await table.page({}, 0, 10), []);
  assert.equal(await table.prune(4, 3), 0, 'nothing to prune');

  for (let i = 1; i <= 10; i++) await table.tx((_tx, record) => record({ type: 'task.status', project_id: null, data: i }));
  const left = async () => (await table.page({}, 0, 100)).map((e) => e.data);
  assert.equal(await table.lastSeq(), 10);
  assert.equal(await table.prune(4, 3), 3);
  assert.deepEqual(await left(), [4, 5, 6, 7, 8, 9, 10], 'the oldest first');
  assert.equal(await table.prune(4, 3), 3);
  assert.deepEqual(await left(), [7, 8, 9, 10]);
  assert.equal(await table.prune(4, 3), 0, 'the newest keep stay');
  assert.equal(await table.prune(10, 1000), 0, 'fewer than keep');
  assert.equal(await table.lastSeq(), 10);

  await table.tx((_tx, record) => record({ type: 'task.status', project_id: null, data: 11 }));
  assert.equal(await table.lastSeq(), 11);
  assert.equal(await table.prune(2, 1000), 3);
  assert.deepEqual(await left(), [10, 11]);
});
