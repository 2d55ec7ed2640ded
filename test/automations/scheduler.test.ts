// The automations' clock alone (daemon/automations/scheduler.ts) on a real store, with a clock the
// test moves: on-time times claimed at once; a wall-clock jump (a wake) holds missed times until
// the machine has been awake 30 s, then folds them; what it claims is started; a paused one is not.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pino from 'pino';
import { createScheduler, FALLBACK_MS, SETTLE_MS, type Clock } from '../../daemon/automations/scheduler.ts';
import { automationRunsTable, lastRunIn } from '../../daemon/store/automation-runs.ts';
import { automationsTable } from '../../daemon/store/automations.ts';
import { addTask, openTestStore, until } from '../helpers/store.ts';

const s = await openTestStore(after);
const automations = automationsTable(s.store.db, s.events, lastRunIn);
const runs = automationRunsTable(s.store.db, s.events);
const T0 = Date.UTC(2026, 2, 7, 12, 0, 0);

// A clock whose wall and monotonic times move only when the test says: `sleep` moves both (the
// machine awake), `suspend` only the wall clock (asleep: monotonic clocks stop).
function testClock() {
  let wall = T0;
  let mono = 0;
  const clock: Clock = { now: () => wall, monotonic: () => mono };
  return { clock, awake: (ms: number) => ((wall += ms), (mono += ms)), suspend: (ms: number) => (wall += ms) };
}

async function setUp(t: TestContext, schedule: object, firstMs = 60_000) {
  const task = await addTask(t, s);
  const host = (await s.getProject(task.project_id)).host_id;
  const a = (await automations.insert({
    id: randomUUID(),
    project_id: task.project_id,
    repository: null,
    name: 'every minute',
    enabled: true,
    source: 'api',
    declared: null,
    cursor: new Date(T0).toISOString(),
    next_run_at: new Date(T0 + firstMs).toISOString(),
    schedule: schedule as never,
    session: { prompt: 'hi' },
    task: {},
    precheck: null,
    land: 'none',
    missed: { policy: 'latest', grace_s: 300 },
    overlap: 'queue',
  }))!;
  const c = testClock();
  // The store's other automations (other tests') are this host's too: only this one's count.
  const started: string[] = [];
  const scheduler = createScheduler({ automations, runs, started: (id) => id === a.id && started.push(id), hostId: host, clock: c.clock, log: pino({ level: 'silent' }) });
  t.after(() => scheduler.close());
  const claimed = async () => (await runs.list(a.id)).reverse().map((r) => [new Date(r.scheduled_for).getTime() - T0, r.status, r.reason, r.missed]);
  return { a, c, scheduler, started, claimed };
}

test('a time noticed on time is claimed and started; the next one waits for its time', async (t) => {
  const { a, c, scheduler, started, claimed } = await setUp(t, { cron: '* * * * *', timezone: 'UTC' });
  await scheduler.tickNow();
  assert.deepEqual(await claimed(), [], 'not yet');
  c.awake(60_000 + 300);
  await scheduler.tickNow();
  assert.deepEqual(await claimed(), [[60_000, 'pending', null, 0]]);
  assert.deepEqual(started, [a.id]);
  c.awake(30_000);
  await scheduler.tickNow();
  assert.equal((await claimed()).length, 1, 'nothing more until 12:02');
  assert.equal((await automations.get(a.id))!.next_run_at, new Date(T0 + 120_000).toISOString());
});

test('after a wake, missed times wait until the machine has been awake 30 s, then fold into one run and one skipped', async (t) => {
  const { a, c, scheduler, started, claimed } = await setUp(t, { cron: '* * * * *', timezone: 'UTC' });
  await scheduler.tickNow();
  // Asleep for 10 minutes, then awake: 12:01 … 12:10 were missed.
  c.suspend(10 * 60_000 + 30_000);
  c.awake(100);
  await scheduler.tickNow();
  assert.deepEqual(await claimed(), [], 'held: the machine just woke');
  c.awake(SETTLE_MS - 1_000);
  await scheduler.tickNow();
  assert.deepEqual(await claimed(), [], 'still settling');
  c.awake(1_000);
  await scheduler.tickNow();
  // At 12:11:01.1 with a grace of 5 minutes: 12:01 … 12:06 are older, 12:07 … 12:11 within.
  assert.deepEqual(await claimed(), [
    [6 * 60_000, 'skipped', 'missed', 6],
    [11 * 60_000, 'pending', null, 4],
  ]);
  assert.deepEqual(started, [a.id]);
});

test('during the settling, an on-time time still runs at once; a daemon that starts is no wake', async (t) => {
  const { c, scheduler, claimed } = await setUp(t, { cron: '*/20 * * * * *', timezone: 'UTC' }, 20_000);
  c.awake(59_000);
  // The first tick of a scheduler sees no jump: what the daemon missed while down is due at once.
  await scheduler.tickNow();
  assert.deepEqual(await claimed(), [[40_000, 'pending', null, 1]]);
  // Awake again at 12:06:11: 12:06:00 is late, held with the others.
  c.suspend(5 * 60_000 + 11_000);
  c.awake(1_000);
  await scheduler.tickNow();
  assert.deepEqual((await claimed()).length, 1, 'missed times held after the wake');
  // 12:06:20 comes while settling: on time, it runs, and what was held goes by the policy with it
  // (grace 5 minutes: 12:01:00 and 12:01:20 are older, one skipped run; the rest folded).
  c.awake(9_000);
  await scheduler.tickNow();
  assert.deepEqual((await claimed()).slice(1), [
    [80_000, 'skipped', 'missed', 2],
    [380_000, 'pending', null, 14],
  ]);
});

test('idle, it leaves the store idle: its ticks read the clock only, until the next due time it read, a poke (an automation made or changed here) or the fallback poll', async (t) => {
  const reads: string[] = [];
  const counted: Pick<typeof automations, 'due' | 'nextDue'> = {
    due: (...a) => (reads.push('due'), automations.due(...a)),
    nextDue: (...a) => (reads.push('nextDue'), automations.nextDue(...a)),
  };
  // A host of its own: nothing of the other tests is due for it.
  const scheduler = createScheduler({ automations: counted, runs, started: () => {}, hostId: randomUUID(), log: pino({ level: 'silent' }) });
  t.after(() => scheduler.close());
  scheduler.start();
  await until(() => reads.length === 2, 'the first tick');
  // Two of its one-second ticks, which would each have read the store.
  await delay(2_500);
  assert.deepEqual(reads, ['due', 'nextDue'], 'the ticks since read the clock only');
  assert.ok(FALLBACK_MS <= 10_000, 'another daemon of a team is heard within the fallback poll');
  scheduler.poke();
  await until(() => reads.length === 4, 'a poke reads the store at once');
});
