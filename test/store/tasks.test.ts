// The tasks table (daemon/store/tasks.ts) alone on a real store: each change with its event in
// one transaction, ports leased with the row or not at all, the warm pool's slots claimed once,
// stacked tasks and their restack recorded once, and start-up recovery taking its host's rows only.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after } from 'node:test';
import { projectsTable } from '../../daemon/store/projects.ts';
import { tasksTable, type NewTask } from '../../daemon/store/tasks.ts';
import { withPresence } from '../../daemon/tasks/read.ts';
import { makeTempDir } from '../helpers/git.ts';
import { openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

const OTHER_HOST = '00000000-0000-4000-8000-000000000002';
const s = await openTestStore(after);
const tasks = tasksTable(s.store.db, s.events, withPresence);
const projects = projectsTable(s.store.db, s.events);

let ports = 21000;
async function project(t: test.TestContext, hostId = TEST_HOST_ID) {
  if (hostId !== TEST_HOST_ID) await s.store.db.query(`INSERT INTO hosts (id, name, version) VALUES ($1, 'other', '0.0.1') ON CONFLICT DO NOTHING`, [hostId]);
  const dir = makeTempDir(t);
  return projects.insert({ id: randomUUID(), name: `p-${randomUUID().slice(0, 8)}`, path: dir, host_id: hostId, repository: null });
}
const newTask = (projectId: string, name: string, over: Partial<NewTask> = {}): NewTask => ({
  id: randomUUID(), project_id: projectId, name, branch: `grove/${name}`, worktree_path: `.grove/worktrees/${name}/`, base: 'main', base_commit: 'abc', status: 'ready', ...over,
});
// The events recorded for a task after `seq`, by type.
const eventsOf = async (taskId: string, after: number) => (await s.events.page({ task_id: taskId }, after, 100)).map((e) => e.type);

test('insert: the row, its port leases and task.created with the task as the API shows it, together; a port already leased leaves nothing of the second task', async (t) => {
  const p = await project(t);
  const seq = await s.events.lastSeq();
  const a = newTask(p.id, 'alpha');
  const port = ports++;
  await tasks.insert(a, { 3000: port });
  const got = (await tasks.get(a.id))!;
  assert.deepEqual([got.name, got.status, got.ports, got.host_id, got.pooled, got.merged_at], ['alpha', 'ready', { 3000: port }, TEST_HOST_ID, false, null]);
  const [created] = await s.events.page({ task_id: a.id }, seq, 10);
  assert.equal(created!.type, 'task.created');
  assert.deepEqual([(created!.data as any).ports, (created!.data as any).worktree_missing], [{ 3000: port }, true], 'the view: no folder made for it');

  const b = newTask(p.id, 'beta');
  await assert.rejects(tasks.insert(b, { 3000: ports++, 5432: port }), (err: any) => err.code === '23505');
  assert.equal(await tasks.get(b.id), null);
  assert.deepEqual(await eventsOf(b.id, seq), [], 'no event of a task that was not made');
  assert.deepEqual((await s.store.db.query('SELECT port FROM port_leases WHERE task_id = $1', [b.id])).rows, [], 'nor its other lease');
  assert.deepEqual((await tasks.list(p.id)).map((x) => x.name), ['alpha']);
});

test('setStatus from a status changes only that one, with task.status; archive releases the ports with task.archived; live counts and paths leave archived tasks out', async (t) => {
  const p = await project(t);
  const a = newTask(p.id, 'a', { status: 'setting_up' });
  const b = newTask(p.id, 'b');
  const port = ports++;
  await tasks.insert(a, { 3000: port });
  await tasks.insert(b, {});
  const seq = await s.events.lastSeq();
  assert.equal(await tasks.setStatus(a.id, 'ready', 'setup_failed'), false, 'not from the status it is in');
  assert.deepEqual(await eventsOf(a.id, seq), []);
  assert.equal(await tasks.setStatus(a.id, 'ready', 'setting_up'), true);
  assert.equal((await tasks.get(a.id))!.status, 'ready');
  assert.equal(await tasks.countLive(p.id), 2);

  await tasks.archive(a.id);
  const archived = (await tasks.get(a.id))!;
  assert.equal(archived.status, 'archived');
  assert.ok(archived.archived_at);
  assert.deepEqual(archived.ports, {}, 'its ports are free again');
  assert.deepEqual(await eventsOf(a.id, seq), ['task.status', 'task.archived']);
  assert.equal(await tasks.countLive(p.id), 1);
  assert.deepEqual(await tasks.liveWorktreePaths(p.id), ['.grove/worktrees/b/']);
  // The freed port can be leased again.
  await tasks.insert(newTask(p.id, 'c'), { 3000: port });
});

test('slots: stored free without an event and outside the task list; a claim takes the oldest ready one once, even at once; a claimed slot becomes the task with task.created', async (t) => {
  const p = await project(t);
  const seq = await s.events.lastSeq();
  const one = newTask(p.id, 'slot-1');
  const two = newTask(p.id, 'slot-2');
  const notReady = newTask(p.id, 'slot-0', { status: 'setting_up' });
  await tasks.insert(notReady, {}, '{}');
  await tasks.insert(one, {}, '{"setup":[]}');
  await tasks.insert(two, {}, '{}');
  assert.deepEqual(await tasks.list(p.id), []);
  assert.equal(await tasks.get(one.id), null);
  assert.equal((await tasks.getAny(one.id))!.name, 'slot-1');
  assert.equal(await tasks.countLive(p.id), 0);
  assert.deepEqual((await s.events.page({ project_id: p.id }, seq, 10)).map((e) => e.type), [], 'a slot records no event');
  assert.deepEqual((await tasks.slots(p.id)).map((x) => [x.id, x.slot]), [[notReady.id, 'free'], [one.id, 'free'], [two.id, 'free']]);

  const claims = await Promise.all([tasks.claimSlot(p.id), tasks.claimSlot(p.id), tasks.claimSlot(p.id)]);
  assert.deepEqual(claims.map((c) => c?.id ?? null).sort(), [one.id, two.id, null].sort(), 'each ready slot once; the one setting up is not taken');
  assert.equal(await tasks.takeSlot(one.id), false, 'a claimed slot cannot be taken for removal');
  assert.equal(await tasks.takeSlot(notReady.id), true);

  await tasks.recordClaim(two.id, 'given-back', 'grove/given-back');
  assert.equal((await tasks.slots(p.id)).find((x) => x.id === two.id)!.claim_branch, 'grove/given-back');
  await tasks.releaseSlot(two.id);
  const back = (await tasks.slots(p.id)).find((x) => x.id === two.id)!;
  assert.deepEqual([back.slot, back.claim_name, back.claim_branch], ['free', null, null]);

  await tasks.becomeTask(one.id, 'real', 'grove/real');
  const real = (await tasks.get(one.id))!;
  assert.deepEqual([real.name, real.branch, real.pooled], ['real', 'grove/real', true]);
  assert.deepEqual(await eventsOf(one.id, seq), ['task.created']);
  assert.deepEqual((await tasks.list(p.id)).map((x) => x.id), [one.id]);
});

test('a task stacked on one that merged since is found once per host; its restack is recorded once, while its base still names the parent', async (t) => {
  const p = await project(t);
  const parent = newTask(p.id, 'parent');
  const child = newTask(p.id, 'child', { base: 'grove/parent' });
  const byRef = newTask(p.id, 'by-ref', { base: 'refs/heads/grove/parent' });
  const unrelated = newTask(p.id, 'unrelated');
  for (const x of [parent, child, byRef, unrelated]) await tasks.insert(x, {});
  assert.deepEqual(await tasks.stackedOnMerged(TEST_HOST_ID).then((r) => r.filter((x) => x.parent === parent.id)), []);

  const seq = await s.events.lastSeq();
  await tasks.markMerged(parent.id, 'c0ffee');
  assert.deepEqual(await eventsOf(parent.id, seq), ['task.merged']);
  assert.equal((await tasks.get(parent.id))!.merged_commit, 'c0ffee');
  const stacked = (await tasks.stackedOnMerged(TEST_HOST_ID)).filter((x) => x.parent === parent.id);
  assert.deepEqual(stacked.map((x) => [x.id, x.parent_branch, x.parent_base, x.merged_commit]), [
    [child.id, 'grove/parent', 'main', 'c0ffee'],
    [byRef.id, 'grove/parent', 'main', 'c0ffee'],
  ]);
  assert.deepEqual((await tasks.stackedOnMerged(OTHER_HOST)).filter((x) => x.parent === parent.id), [], 'another host’s recovery takes none of them');

  assert.equal(await tasks.restacked(child.id, 'grove/parent', 'main', 'beef', { restacked_from: 'grove/parent' }), true);
  assert.equal(await tasks.restacked(child.id, 'grove/parent', 'main', 'beef', {}), false, 'once');
  const moved = (await tasks.get(child.id))!;
  assert.deepEqual([moved.base, moved.base_commit], ['main', 'beef']);
  const [ev] = await s.events.page({ task_id: child.id }, seq, 10);
  assert.deepEqual([ev!.type, (ev!.data as any).restacked_from, (ev!.data as any).base], ['task.status', 'grove/parent', 'main']);
  assert.equal(await tasks.restacked(byRef.id, 'grove/parent', 'main', 'beef', {}), true, 'a base given as a full ref is the same branch');
  await tasks.recordRestackFailed(unrelated.id, { restack_failed: 'conflict' });
  assert.equal(((await s.events.page({ task_id: unrelated.id }, seq, 10))[0]!.data as any).restack_failed, 'conflict');
  // A task made on a parent that had merged already was stacked there on purpose.
  const late = newTask(p.id, 'late', { base: 'grove/parent' });
  await tasks.insert(late, {});
  assert.ok(!(await tasks.stackedOnMerged(TEST_HOST_ID)).some((x) => x.id === late.id));
});

test('start-up recovery: setups a stopped daemon left running fail, and archives it left under way are found, on its own host only', async (t) => {
  const mine = await project(t);
  const theirs = await project(t, OTHER_HOST);
  const a = newTask(mine.id, 'a', { status: 'setting_up' });
  const b = newTask(theirs.id, 'b', { status: 'setting_up' });
  const c = newTask(mine.id, 'c');
  for (const x of [a, b, c]) await tasks.insert(x, {});
  assert.equal(await tasks.anySettingUp(TEST_HOST_ID), true);
  const seq = await s.events.lastSeq();
  const failed = await tasks.failInterruptedSetups(TEST_HOST_ID);
  assert.ok(failed.includes(a.id) && !failed.includes(b.id));
  assert.equal((await tasks.get(a.id))!.status, 'setup_failed');
  assert.equal((await tasks.get(b.id))!.status, 'setting_up', 'another host’s setup is its own');
  assert.deepEqual(await eventsOf(a.id, seq), ['task.status']);
  assert.equal(await tasks.anySettingUp(TEST_HOST_ID), false);

  await tasks.setArchiving(c.id, true);
  await tasks.setArchiving(b.id, true);
  assert.ok((await tasks.listArchiving(TEST_HOST_ID)).includes(c.id));
  assert.ok(!(await tasks.listArchiving(TEST_HOST_ID)).includes(b.id));
  await tasks.setArchiving(c.id, false);
  assert.ok(!(await tasks.listArchiving(TEST_HOST_ID)).includes(c.id));
  await tasks.remove(c.id);
  assert.equal(await tasks.getAny(c.id), null);
});
