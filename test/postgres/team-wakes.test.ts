// What crosses daemons on a shared store (DESIGN §14.2): the team reader that feeds a daemon's
// bus from the store, and the wake-ups by key of output and setup followers. Two stores on one
// database stand for two daemons.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test, type TestContext } from 'node:test';
import { pino } from 'pino';
import type { GroveEvent } from '../../schemas/event.ts';
import { createEventBus } from '../../daemon/events/bus.ts';
import { createTeamReader, EVENTS_CHANNEL } from '../../daemon/events/team.ts';
import { openStore, type Store } from '../../daemon/store/db.ts';
import { eventsTable } from '../../daemon/store/events.ts';
import { createTeamWakes } from '../../daemon/store/wakes.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { until } from '../helpers/store.ts';

const log = pino({ level: 'silent' });
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const event = (n: number) => ({ type: 'project.added' as const, project_id: null, data: { n } });

async function twoDaemons(t: TestContext): Promise<[Store, Store]> {
  const url = await freshDatabase();
  const open = async () => {
    const store = await openStore({ dataDir: tmpdir(), databaseUrl: url, log });
    t.after(() => store.close());
    return store;
  };
  return [await open(), await open()];
}

test("the team reader puts another daemon's events on this bus in seq order, and a local commit returns once its events are there", async (t) => {
  const [one, two] = await twoDaemons(t);
  // Daemon one only records and notifies; daemon two follows with a reader whose poll is slow,
  // so that the notification is what wakes it in time. Not an hour: a read that fails on a
  // loaded machine (a connect or statement timeout) is tried again by the poll only, as in the
  // daemon, and twice in CI the last events never came with an hour's poll.
  const recorder = eventsTable(one.db, (evs) => one.notify(EVENTS_CHANNEL, String(evs.at(-1)!.seq)), { hostId: A, shared: true });
  const bus = createEventBus();
  const got: GroveEvent[] = [];
  bus.committed.onAnyChange((e) => got.push(e));
  let reader: ReturnType<typeof createTeamReader> | null = null;
  const local = eventsTable(two.db, (evs) => reader!.recorded(evs), { hostId: B, shared: true });
  bus.begin(await local.lastSeq());
  reader = createTeamReader({ bus, events: local, store: two, log, pollMs: 5_000 });
  t.after(() => reader!.close());

  // The LISTEN of daemon two may not be in place at once: one records until two has heard.
  await until(async () => {
    await recorder.tx(async (_tx, record) => record(event(0)));
    return got.length > 0;
  }, 'two hearing one');
  await recorder.tx(async (_tx, record) => {
    await record(event(100));
    await record(event(101));
  });
  // 30 s: in one loaded CI run this wait passed 10 s (never seen alone, nor with three copies of
  // this file at once); only a wake-up that never comes should fail it.
  await until(() => got.some((e) => (e.data as any).n === 101), "one's last events on two's bus", 30_000);
  await local.tx(async (_tx, record) => record(event(200)));
  assert.equal((got.at(-1)!.data as any).n, 200, "two's own event is on its bus when its commit returns");
  assert.equal(got.at(-1)!.host_id, B);
  assert.deepEqual(
    got.map((e) => e.seq),
    got.map((e) => e.seq).sort((x, y) => x - y),
  );
  assert.equal(new Set(got.map((e) => e.seq)).size, got.length, 'each once');
  const table = (await two.db.query<{ seq: number }>('SELECT seq FROM events ORDER BY seq')).rows.map((r) => Number(r.seq));
  assert.deepEqual(
    got.map((e) => e.seq),
    table,
  );
});

test("wakes by key: a tell on one daemon wakes that key's watchers on the other; a missed notification is made up by the poll", async (t) => {
  const [one, two] = await twoDaemons(t);
  const teller = createTeamWakes({ store: one, channel: 'grove_test', log });
  const far = createTeamWakes({ store: two, channel: 'grove_test', log, pollMs: 3_600_000 });
  t.after(() => Promise.all([teller.close(), far.close()]));
  let a = 0;
  let b = 0;
  far.watch('a', () => a++);
  const stopB = far.watch('b', () => b++);
  // The LISTEN may not be in place at once: tell until it is heard.
  await until(() => {
    teller.tell('a');
    return a > 0;
  }, 'a told');
  assert.equal(b, 0, "another key's watcher is not woken");
  stopB();

  // No tell at all: the poll wakes the watcher.
  const polled = createTeamWakes({ store: two, channel: 'grove_quiet', log, pollMs: 50 });
  t.after(() => polled.close());
  let c = 0;
  polled.watch('c', () => c++);
  await until(() => c > 0, 'the poll');
});
