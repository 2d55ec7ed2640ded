// The automations' tables alone on a real store (daemon/store/automations.ts, automation-runs.ts):
// a scheduled time claimed once however many claim it at once, overlap skipped at the claim,
// changes guarded by status, each with its event.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after, type TestContext } from 'node:test';
import { automationRunsTable, type Claims, lastRunIn } from '../../daemon/store/automation-runs.ts';
import { automationsTable } from '../../daemon/store/automations.ts';
import { addTask, openTestStore } from '../helpers/store.ts';

const s = await openTestStore(after);
const automations = automationsTable(s.store.db, s.events, lastRunIn);
const runs = automationRunsTable(s.store.db, s.events);

const T = (sec: number) => new Date(Date.UTC(2026, 2, 7, 12, 0, sec));

async function automation(t: TestContext, overlap: 'skip' | 'queue' = 'skip') {
  const task = await addTask(t, s);
  const a = await automations.insert({
    id: randomUUID(),
    project_id: task.project_id,
    repository: null,
    name: `a ${randomUUID().slice(0, 6)}`,
    enabled: true,
    source: 'api',
    declared: null,
    cursor: T(0).toISOString(),
    next_run_at: T(2).toISOString(),
    schedule: { cron: '*/2 * * * * *', timezone: 'UTC' },
    session: { prompt: 'hi' },
    task: {},
    precheck: null,
    land: 'none',
    missed: { policy: 'latest', grace_s: 60 },
    overlap,
  });
  return a!;
}

const at = (sec: number, next = sec + 2): Claims => ({ claims: [{ scheduled_for: T(sec), missed: 0, skipped: null }], cursor: T(sec), next_run_at: T(next) });

test('a scheduled time is claimed once, however many claim it at once; the cursor and next time move on', async (t) => {
  const a = await automation(t, 'queue');
  const seq = await s.events.lastSeq();
  const claimed = await Promise.all([1, 2, 3, 4].map(() => runs.claimDue(a.id, a.project_id!, T(2), () => at(2), randomUUID)));
  assert.equal(claimed.flat().length, 1, 'one run');
  // The run's event, and the automation's own with its next time moved and that run as its last.
  const events = await s.events.page({ project_id: a.project_id! }, seq, 100);
  assert.deepEqual(events.map((e) => e.type), ['automation.run', 'automation.updated']);
  assert.deepEqual([(events[1]!.data as any).next_run_at, (events[1]!.data as any).last_run.id], [T(4).toISOString(), claimed.flat()[0]!.id]);
  const stored = (await automations.get(a.id))!;
  assert.deepEqual([stored.cursor, stored.next_run_at], [T(2).toISOString(), T(4).toISOString()]);
  assert.deepEqual(await runs.claimDue(a.id, a.project_id!, T(3), () => at(2), randomUUID), [], 'not due again before its next time');
  // The same time claimed again (a host with a stale row): the key refuses it.
  await s.store.db.query('UPDATE automations SET next_run_at = $2 WHERE id = $1', [a.id, T(2)]);
  assert.deepEqual(await runs.claimDue(a.id, a.project_id!, T(3), () => at(2), randomUUID), []);
  assert.equal((await runs.list(a.id)).length, 1);
});

test('overlap skip: a time claimed while a run is going is recorded skipped; a manual run too', async (t) => {
  const a = await automation(t, 'skip');
  const [first] = await runs.claimDue(a.id, a.project_id!, T(2), () => at(2), randomUUID);
  assert.equal(first!.status, 'pending');
  const [second] = await runs.claimDue(a.id, a.project_id!, T(4), () => at(4), randomUUID);
  assert.deepEqual([second!.status, second!.reason, second!.ended_at !== null], ['skipped', 'overlap', true]);
  const manual = (await runs.runNow(a.id, a.project_id!, randomUUID(), T(5)))!;
  assert.deepEqual([manual.trigger, manual.status, manual.reason], ['manual', 'skipped', 'overlap']);
  // Ended: the next one runs.
  assert.ok(await runs.change(first!.id, ['pending'], { status: 'failed', error: 'x', ended_at: T(5) }));
  assert.equal((await runs.runNow(a.id, a.project_id!, randomUUID(), T(6)))!.status, 'pending');
  assert.equal(await runs.runNow(randomUUID(), a.project_id!, randomUUID(), T(6)), null, 'no such automation');
});

test('a change only from the statuses given, with its event; the process of a precheck records none', async (t) => {
  const a = await automation(t);
  const [run] = await runs.claimDue(a.id, a.project_id!, T(2), () => at(2), randomUUID);
  const seq = await s.events.lastSeq();
  assert.equal(await runs.change(run!.id, ['running'], { status: 'succeeded' }), null, 'not running: unchanged');
  assert.equal((await runs.change(run!.id, ['pending'], { status: 'precheck' }))!.status, 'precheck');
  assert.equal((await runs.change(run!.id, ['precheck'], { precheck_pid: 123, precheck_pid_start: '9' }))!.precheck_pid, 123);
  const done = (await runs.change(run!.id, ['precheck'], { status: 'skipped', reason: 'precheck', precheck: { exit_code: 1, output: 'no\n' }, ended_at: T(3) }))!;
  assert.deepEqual(done.precheck, { exit_code: 1, output: 'no\n' });
  const events = await s.events.page({ project_id: a.project_id! }, seq, 100);
  assert.deepEqual(events.map((e) => [e.type, (e.data as any).status]), [['automation.run', 'precheck'], ['automation.run', 'skipped']]);
  assert.ok(!('precheck_pid' in (events[0]!.data as object)), 'the API shape');
  assert.equal((await runs.latest([a.id])).get(a.id)!.id, run!.id);
  assert.deepEqual(await runs.active(a.id), []);
});

test('due: the enabled automations of this host whose time has come, not paused ones', async (t) => {
  const a = await automation(t);
  const host = (await s.getProject(a.project_id!)).host_id;
  assert.ok((await automations.due(host, T(2))).some((x) => x.id === a.id));
  assert.ok(!(await automations.due(host, T(1))).some((x) => x.id === a.id), 'not yet');
  assert.ok(!(await automations.due(randomUUID(), T(2))).some((x) => x.id === a.id), "another host's");
  assert.equal((await runs.claimDue(a.id, a.project_id!, T(2), () => at(2), randomUUID)).length, 1);
  const paused = (await automations.update(a.id, (x) => ({ ...x, enabled: false, next_run_at: null })))!;
  assert.ok(paused !== 'exists' && paused.next_run_at === null);
  assert.ok(!(await automations.due(host, T(10))).some((x) => x.id === a.id), 'paused');
});
