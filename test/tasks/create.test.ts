import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import test, { type TestContext } from 'node:test';
import { createKeyedMutex } from '../../daemon/runtime/keyed-mutex.ts';
import { createTaskCreator } from '../../daemon/tasks/create.ts';
import { createPortAllocator } from '../../daemon/tasks/ports.ts';
import { createSetupRunner } from '../../daemon/tasks/setup-run.ts';
import { repoState } from '../helpers/state.ts';
import { taskParts, type TaskParts } from '../helpers/tasks.ts';

function creator(parts: TaskParts, ports = parts.ports) {
  const setup = createSetupRunner({ ...parts, setupTimeoutS: 30 });
  return createTaskCreator({ ...parts, ports, perProject: createKeyedMutex(), setup, setupTimeoutS: 60 });
}

// A port this test holds, so the allocator must skip it (or has nothing left).
async function holdPort(t: TestContext): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.after(() => srv.close());
  return (srv.address() as { port: number }).port;
}

test('tasks/create: worktree, row and ports together, setup after, everything undone on failure', async (t) => {
  const parts = await taskParts(t);
  const create = creator(parts);

  await t.test('a task without setup is stored ready with its branch, worktree and leased ports; no intent is left', async () => {
    const project = await parts.project({ ports: [3000, 5432] });
    const { status, task } = await create({ project_id: project.id, name: 'Fix login' });
    assert.equal(status, 201);
    assert.equal(task.status, 'ready');
    assert.equal(task.branch, 'grove/fix-login');
    assert.equal(task.worktree_path, '.grove/worktrees/fix-login/');
    assert.equal(task.worktree_missing, false);
    assert.deepEqual(Object.keys(task.ports).sort(), ['3000', '5432']);
    const held = await parts.leases.held();
    for (const port of Object.values(task.ports)) assert.ok(held.has(port), `port ${port} is leased`);
    assert.deepEqual(repoState(project.path), { branches: ['grove/fix-login', 'main'], worktrees: ['.grove/worktrees/fix-login/'], folders: ['fix-login'] });
    assert.deepEqual(parts.journal.pending(), []);
    assert.equal((await create({ project_id: project.id, name: 'quick', wait: false })).status, 202, 'nothing to wait for, still 202');
  });

  await t.test('with setup: waited for (201 ready) or not (202 setting_up, ready later)', async () => {
    const project = await parts.project({ setup: ['echo "$GROVE_BRANCH"'] });
    const waited = await create({ project_id: project.id, name: 'waited' });
    assert.equal(waited.status, 201);
    assert.equal(waited.task.status, 'ready');
    assert.deepEqual((await parts.setupLog.lines(waited.task.id)).map((l) => l.text), ['grove/waited']);

    const early = await create({ project_id: project.id, name: 'early', wait: false });
    assert.equal(early.status, 202);
    assert.equal(early.task.status, 'setting_up');
    const deadline = Date.now() + 30_000;
    while ((await parts.read.get(early.task.id)).status === 'setting_up' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await parts.read.get(early.task.id)).status, 'ready');
  });

  await t.test('no row can be stored (no free port): the worktree and the new branch are taken back, no intent left', async (t) => {
    const held = await holdPort(t);
    const noPort = creator(parts, createPortAllocator({ leases: parts.leases, range: [held, held] }));
    const project = await parts.project({ ports: [3000] });
    await assert.rejects(noPort({ project_id: project.id, name: 'no port' }), { name: 'GroveError', code: 'UNAVAILABLE' });
    assert.deepEqual(repoState(project.path), { branches: ['main'], worktrees: [], folders: [] });
    assert.deepEqual(await parts.tasks.list(project.id), []);
    assert.deepEqual(parts.journal.pending(), []);
  });

  await t.test("a worker's refusal is the domain error, with the field it names", async () => {
    const project = await parts.project();
    await assert.rejects(create({ project_id: project.id, name: 'x', branch: 'main' }), {
      name: 'GroveError',
      code: 'BRANCH_EXISTS',
      errors: [{ path: '/branch', message: "branch main exists already, or clashes with an existing branch's path" }],
    });
    await assert.rejects(create({ project_id: project.id, name: 'x', base: 'nope' }), { code: 'BASE_NOT_FOUND' });
    assert.deepEqual(parts.journal.pending(), []);
    assert.deepEqual(await parts.tasks.list(project.id), []);
  });

  await t.test('concurrent creations on one project take turns: the same name gets -2, -3… and all succeed', async () => {
    const project = await parts.project();
    const made = await Promise.all(Array.from({ length: 5 }, () => create({ project_id: project.id, name: 'same' })));
    assert.deepEqual(made.map((m) => m.task.branch).sort(), ['grove/same', 'grove/same-2', 'grove/same-3', 'grove/same-4', 'grove/same-5']);
    assert.equal(repoState(project.path).worktrees.length, 5);
  });
});
