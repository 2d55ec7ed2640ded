import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import type { Task } from '../../schemas/task.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { tasksTable, type StoredTask } from '../../daemon/store/tasks.ts';
import { createTaskReader, withPresence } from '../../daemon/tasks/read.ts';
import { makeTempDir } from '../helpers/git.ts';
import { openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

const WORKTREE = '.grove/worktrees/job/';

function stored(status: StoredTask['status']): StoredTask {
  return {
    id: randomUUID(),
    name: 'job',
    branch: 'grove/job',
    worktree_path: WORKTREE,
    status,
    project_id: randomUUID(),
    host_id: TEST_HOST_ID,
    base: 'main',
    base_commit: 'b'.repeat(40),
    ports: {},
    created_at: new Date().toISOString(),
    archived_at: null,
    merged_at: null,
    merged_commit: null,
    pooled: false,
    issue: null,
  };
}

test('withPresence: a live task whose folder is gone says its worktree is missing; an archived one never does', (t) => {
  const project = makeTempDir(t);
  const ready = stored('ready');
  assert.equal(withPresence(ready, project).worktree_missing, true, 'never made');
  mkdirSync(path.join(project, WORKTREE), { recursive: true });
  assert.deepEqual(withPresence(ready, project), { ...ready, worktree_missing: false });
  rmSync(path.join(project, WORKTREE), { recursive: true });
  assert.equal(withPresence(ready, project).worktree_missing, true, 'deleted by hand');
  assert.equal(withPresence(stored('archived'), project).worktree_missing, false);
  // A folder replaced by a link to another is not the task's worktree (the stored path ends in '/').
  const elsewhere = makeTempDir(t);
  mkdirSync(path.dirname(path.join(project, WORKTREE)), { recursive: true });
  symlinkSync(elsewhere, path.join(project, WORKTREE.slice(0, -1)));
  assert.equal(withPresence(ready, project).worktree_missing, true, 'a symlink to a folder');
});

test('the store records each task event with the view it is given; the reader looks at the folder on every read', async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const dir = makeTempDir(t);
  const project = await projectsTable(s.store.db, s.events).insert({ id: randomUUID(), name: 'p', path: dir, host_id: TEST_HOST_ID, repository: null });
  const tasks = tasksTable(s.store.db, s.events, withPresence);
  const read = createTaskReader({ tasks, getProject: s.getProject, hostId: TEST_HOST_ID });
  const id = randomUUID();
  await tasks.insert({ id, project_id: project.id, name: 'job', branch: 'grove/job', worktree_path: WORKTREE, base: 'main', base_commit: 'b'.repeat(40), status: 'setting_up' }, {});
  mkdirSync(path.join(dir, WORKTREE), { recursive: true });
  assert.equal(await tasks.setStatus(id, 'ready', 'setting_up'), true);
  const events = (await s.events.page({ task_id: id }, 0, 10)).map((e) => [e.type, (e.data as Task).worktree_missing]);
  assert.deepEqual(events, [
    ['task.created', true],
    ['task.status', false],
  ]);
  assert.equal((await read.get(id)).worktree_missing, false);
  rmSync(path.join(dir, WORKTREE), { recursive: true });
  assert.equal((await read.get(id)).worktree_missing, true);
  assert.deepEqual(
    (await read.list(project.id)).map((x) => x.worktree_missing),
    [true],
  );
});

test("another host's task (a shared store) is not called missing: its folder is on that host's disk", async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const elsewhere = randomUUID();
  const project = await projectsTable(s.store.db, s.events).insert({ id: randomUUID(), name: 'p', path: '/srv/code/p', host_id: elsewhere, repository: null });
  const tasks = tasksTable(s.store.db, s.events, withPresence);
  const id = randomUUID();
  await tasks.insert({ id, project_id: project.id, name: 'job', branch: 'grove/job', worktree_path: WORKTREE, base: 'main', base_commit: 'b'.repeat(40), status: 'ready' }, {});
  const here = createTaskReader({ tasks, getProject: s.getProject, hostId: TEST_HOST_ID });
  assert.equal((await here.get(id)).worktree_missing, false);
  assert.deepEqual((await here.list(project.id)).map((x) => x.worktree_missing), [false]);
  const owner = createTaskReader({ tasks, getProject: s.getProject, hostId: elsewhere });
  assert.equal((await owner.get(id)).worktree_missing, true, 'its owner looks, and the folder is not there');
});
