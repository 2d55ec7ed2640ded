import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { portLeasesTable } from '../../daemon/store/port-leases.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { tasksTable } from '../../daemon/store/tasks.ts';
import { bindsFree, createPortAllocator } from '../../daemon/tasks/ports.ts';
import { withPresence } from '../../daemon/tasks/read.ts';
import { makeTempDir } from '../helpers/git.ts';
import { openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

// Opened before the first test is registered, so that `after` closes it with the file.
const s = await openTestStore(after);
const tasks = tasksTable(s.store.db, s.events, withPresence);
const leases = portLeasesTable(s.store.db);

// `n` consecutive ports of 127.0.0.1 that bind free now and no task of this file leases, from a
// random start: no fixed ports, and each test gets a range of its own.
async function freeRange(n: number): Promise<[number, number]> {
  for (;;) {
    const from = 40000 + Math.floor(Math.random() * 20000);
    const ports = Array.from({ length: n }, (_, i) => from + i);
    const held = await leases.held();
    if (!ports.some((p) => held.has(p)) && (await Promise.all(ports.map(bindsFree))).every(Boolean)) return [from, from + n - 1];
  }
}

// A task row holding `ports` as its leases, as task creation reserves them.
async function leaseTo(t: test.TestContext, ports: Record<number, number>): Promise<string> {
  const dir = makeTempDir(t);
  const project = await projectsTable(s.store.db, s.events).insert({ id: randomUUID(), name: path.basename(dir), path: dir, host_id: TEST_HOST_ID, repository: null });
  const id = randomUUID();
  await tasks.insert({ id, project_id: project.id, name: id, branch: `grove/${id}`, worktree_path: `.grove/worktrees/${id}/`, base: 'main', base_commit: 'HEAD', status: 'ready' }, ports);
  return id;
}

test('ports: each declared port gets the next free host port of the range; leased ones are skipped; none left is UNAVAILABLE', async (t) => {
  const [from, to] = await freeRange(3);
  const ports = createPortAllocator({ leases, range: [from, to] });
  const first = await ports.allocate([3000, 5432], async (got) => ({ got, task: await leaseTo(t, got) }));
  assert.deepEqual(first.got, { 3000: from, 5432: from + 1 });
  assert.deepEqual(await ports.allocate([8080], async (got) => (await leaseTo(t, got), got)), { 8080: from + 2 });
  await assert.rejects(ports.allocate([8080], async () => assert.fail('nothing to reserve')), {
    name: 'GroveError',
    code: 'UNAVAILABLE',
    message: `no free port left in port_range [${from}, ${to}] for declared port 8080`,
  });
  assert.deepEqual(await ports.allocate([], async (got) => got), {}, 'nothing declared needs no port');
  await tasks.archive(first.task);
  assert.deepEqual(await ports.allocate([1], async (got) => got), { 1: from }, "an archived task's ports are free again");
});

test('ports: a port something else on the machine holds is skipped', async (t) => {
  const [from, to] = await freeRange(2);
  const other = createServer().listen({ host: '127.0.0.1', port: from });
  await once(other, 'listening');
  t.after(() => other.close());
  assert.equal(await bindsFree(from), false);
  const ports = createPortAllocator({ leases, range: [from, to] });
  assert.deepEqual(await ports.allocate([3000], async (got) => got), { 3000: from + 1 });
});

test('ports: allocations at the same time take turns, each reserving before the next picks', async (t) => {
  const [from, to] = await freeRange(4);
  const ports = createPortAllocator({ leases, range: [from, to] });
  const got = await Promise.all(Array.from({ length: 4 }, () => ports.allocate([3000], async (p) => (await leaseTo(t, p), p[3000]!))));
  assert.deepEqual(got.sort((a, b) => a - b), [from, from + 1, from + 2, from + 3]);
  assert.deepEqual([...(await leases.held())].filter((p) => p >= from && p <= to).sort((a, b) => a - b), got);
});
