import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { createKeyedMutex } from '../../daemon/runtime/keyed-mutex.ts';
import { createTaskArchiver } from '../../daemon/tasks/archive.ts';
import { createTaskCreator } from '../../daemon/tasks/create.ts';
import { createTaskGate } from '../../daemon/tasks/gate.ts';
import { createSetupRunner } from '../../daemon/tasks/setup-run.ts';
import { makeTempDir } from '../helpers/git.ts';
import { repoState, waitPidGone } from '../helpers/state.ts';
import { taskParts } from '../helpers/tasks.ts';

test('tasks/archive: setup stopped, sessions killed, worktree removed, ports released, branch kept', async (t) => {
  const parts = await taskParts(t);
  const perProject = createKeyedMutex();
  const setup = createSetupRunner({ ...parts, setupTimeoutS: 60 });
  const create = createTaskCreator({ ...parts, perProject, setup, setupTimeoutS: 60 });
  const killed: string[] = [];
  const teardown = createSetupRunner({ ...parts, setupLog: parts.teardownLog, setupTimeoutS: 60 });
  const archive = createTaskArchiver({ ...parts, perProject, gate: createTaskGate(), perTask: createKeyedMutex(), setup, teardown, killSessions: async (id) => void killed.push(id), gitTimeoutS: 60 });

  await t.test('a ready task: its sessions are killed, its worktree goes, its branch and commits stay, its ports are free', async () => {
    const project = await parts.project({ ports: [3000] });
    const { task } = await create({ project_id: project.id, name: 'done' });
    const port = task.ports['3000']!;
    const archived = await archive(task.id, false);
    assert.equal(archived.status, 'archived');
    assert.ok(archived.archived_at);
    assert.equal(archived.worktree_missing, false, 'an archived task has no worktree to miss');
    assert.deepEqual(killed, [task.id, task.id], 'killed as the archive begins, and once more before the worktree goes');
    assert.deepEqual(repoState(project.path), { branches: ['grove/done', 'main'], worktrees: [], folders: [] });
    assert.equal((await parts.leases.held()).has(port), false, 'the port is released');
    assert.deepEqual(await archive(task.id, false), archived, 'archiving again answers the archived task');
    assert.deepEqual(killed, [task.id, task.id], 'and does nothing else');
  });

  await t.test('uncommitted work: refused without force (the task stays as it was), removed with it', async () => {
    const project = await parts.project();
    const { task } = await create({ project_id: project.id, name: 'dirty' });
    const wt = path.join(project.path, task.worktree_path);
    writeFileSync(path.join(wt, 'draft.txt'), 'unsaved\n');
    await assert.rejects(archive(task.id, false), { name: 'GroveError', code: 'WORKTREE_DIRTY' });
    assert.equal((await parts.read.get(task.id)).status, 'ready');
    assert.ok(existsSync(path.join(wt, 'draft.txt')));
    assert.equal((await archive(task.id, true)).status, 'archived');
    assert.equal(existsSync(wt), false);
  });

  await t.test('archiving during setup stops the setup and its processes first', async () => {
    const pidFile = path.join(makeTempDir(t), 'pid');
    const project = await parts.project({ setup: [`echo $$ > '${pidFile}'; sleep 60`] });
    const { task } = await create({ project_id: project.id, name: 'busy', wait: false });
    const deadline = Date.now() + 20_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') {
      assert.ok(Date.now() < deadline, 'setup started');
      await new Promise((r) => setTimeout(r, 25));
    }
    const t0 = Date.now();
    const archived = await archive(task.id, true);
    assert.ok(Date.now() - t0 < 30_000, 'it did not wait for the sleep');
    assert.equal(archived.status, 'archived');
    await waitPidGone(Number(readFileSync(pidFile, 'utf8')), 5000);
    const [cmd] = await parts.setupLog.commands(task.id);
    assert.ok(cmd?.ended_at, 'the stopped command was recorded as ended');
    assert.notEqual(cmd?.exit_code, 0);
  });
});
