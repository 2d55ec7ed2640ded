// The port leases (daemon/store/port-leases.ts) alone on a real store: the ports the port allocator
// must not hand out again, as the tasks table leases and frees them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after } from 'node:test';
import { portLeasesTable } from '../../daemon/store/port-leases.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { tasksTable, type NewTask } from '../../daemon/store/tasks.ts';
import { withPresence } from '../../daemon/tasks/read.ts';
import { makeTempDir } from '../helpers/git.ts';
import { openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

const OTHER_HOST = '00000000-0000-4000-8000-000000000002';

// One store for the file: held() reads every lease, so the first test finds it without any.
const s = await openTestStore(after);
const tasks = tasksTable(s.store.db, s.events, withPresence);
const projects = projectsTable(s.store.db, s.events);

// A project on each of two hosts, and the port leases table.
async function setup(t: test.TestContext) {
  const project = async (host_id: string) => (await projects.insert({ id: randomUUID(), name: `p-${randomUUID().slice(0, 8)}`, path: makeTempDir(t), host_id, repository: null })).id;
  const [mine, theirs] = [await project(TEST_HOST_ID), await project(OTHER_HOST)];
  const newTask = (project_id: string, name: string): NewTask => ({
    id: randomUUID(), project_id, name, branch: `grove/${name}`, worktree_path: `.grove/worktrees/${name}/`, base: 'main', base_commit: 'abc', status: 'ready',
  });
  return { leases: portLeasesTable(s.store.db), mine, theirs, newTask };
}

test("held: none on a store without tasks; then every port a live task or a pool slot leases, on any host, as numbers; an archived or removed task's ports are free again", async (t) => {
  const { leases, mine, theirs, newTask } = await setup(t);
  assert.deepEqual(await leases.held(), new Set());

  const a = newTask(mine, 'a');
  const b = newTask(theirs, 'b');
  const slot = newTask(mine, 'slot');
  await tasks.insert(a, { 3000: 41000, 5432: 41001 });
  await tasks.insert(b, { 3000: 41002 });
  await tasks.insert(newTask(mine, 'none'), {});
  await tasks.insert(slot, { 8080: 41003 }, '{}');
  const held = await leases.held();
  assert.deepEqual(held, new Set([41000, 41001, 41002, 41003]), 'a lease is unique in the store: a live task of any host holds its port');
  assert.ok([...held].every((p) => typeof p === 'number'), 'numbers, as the allocator compares them');

  await tasks.archive(a.id);
  assert.deepEqual(await leases.held(), new Set([41002, 41003]));
  await tasks.remove(b.id);
  await tasks.remove(slot.id);
  assert.deepEqual(await leases.held(), new Set());
});

test('held reads the ports at both ends of the range, and is unchanged by a lease the store refuses with its task', async (t) => {
  const { leases, mine, newTask } = await setup(t);
  const before = await leases.held();
  await tasks.insert(newTask(mine, 'low'), { 80: 1 });
  await tasks.insert(newTask(mine, 'high'), { 80: 65535 });
  const held = new Set([...before, 1, 65535]);
  assert.deepEqual(await leases.held(), held);

  for (const [name, port, code] of [['zero', 0, '23514'], ['beyond', 65536, '23514'], ['taken', 65535, '23505']] as const) {
    const refused = newTask(mine, name);
    await assert.rejects(tasks.insert(refused, { 3000: 42000, 5432: port }), (err: any) => err.code === code, name);
    assert.equal(await tasks.getAny(refused.id), null);
  }
  assert.deepEqual(await leases.held(), held, 'not even the lease that was valid');
});
