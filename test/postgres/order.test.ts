// One team stream (DESIGN §14.2): on a shared store events commit in seq order, whichever daemon
// records them, so a follower reading `seq > last` never skips one that commits late.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { test, type TestContext } from 'node:test';
import { pino } from 'pino';
import type { GroveEvent } from '../../schemas/event.ts';
import { openStore } from '../../daemon/store/db.ts';
import type { Store } from '../../daemon/store/store.ts';
import { eventsTable, type EventsTable } from '../../daemon/store/events.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { sessionsTable } from '../../daemon/store/sessions.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { until } from '../helpers/store.ts';

const P = '00000000-0000-4000-8000-000000000001';

// Two daemons' stores on one database, each recording as its own host.
async function twoHosts(t: TestContext): Promise<{ a: EventsTable; b: EventsTable; look: EventsTable; query: (sql: string) => Promise<any[]>; storeB: Store }> {
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
  return { a: a.events, b: b.events, look: look.events, query: async (sql) => (await look.store.db.query<any>(sql)).rows, storeB: b.store };
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

// A recording transaction with its event recorded, held open until `release`: once this resolves
// it holds its turn in the team's event order.
async function recordAndHold(events: EventsTable): Promise<{ slow: Promise<void>; release: () => void }> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let recorded!: () => void;
  const first = new Promise<void>((resolve) => (recorded = resolve));
  const slow = events.tx(async (_tx, record) => {
    await record(event(1));
    recorded();
    await held;
  });
  await first;
  return { slow, release };
}

test('a transaction that took its seq first and commits last is not skipped: the later one waits for it', async (t) => {
  const { a, b, look, query } = await twoHosts(t);
  const f = follower(look);
  // A records, then holds its transaction open; B records and would commit at once.
  const { slow, release } = await recordAndHold(a);
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

test("an output round that records no event is stored while another host's recording transaction holds the team's event order", async (t) => {
  const { a, b, storeB } = await twoHosts(t);
  const host = '00000000-0000-4000-8000-00000000000b';
  const project = await projectsTable(storeB.db, b).insert({ id: randomUUID(), name: 'p', path: tmpdir(), host_id: host, repository: null });
  const task = randomUUID();
  await storeB.db.query(
    `INSERT INTO tasks (id, project_id, name, branch, worktree_path, base, base_commit, status, host_id) VALUES ($1, $2, 'job', 'grove/job', 'w', 'main', 'HEAD', 'ready', $3)`,
    [task, project.id, host],
  );
  const sessions = sessionsTable(storeB.db, b);
  const id = randomUUID();
  await sessions.insert({ id, task_id: task, agent: 'fixture', command: ['true'], mode: 'edit', prompt: null, conversation_id: id, parent_id: null });
  // A records, then holds its transaction (and the team's event order) until B's round is stored.
  const { slow, release } = await recordAndHold(a);
  try {
    await sessions.appendLines(id, 1, { streams: ['stdout', 'stdout'], texts: ['one', 'two'], at: new Date().toISOString() }, { stdout: 8, stderr: 0 });
    assert.deepEqual((await sessions.lines(id, 0, 10)).map((l) => l.text), ['one', 'two']);
    assert.equal((await sessions.get(id))!.next_seq, 3);
  } finally {
    release();
    await slow;
  }
});
