import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import test, { type TestContext } from 'node:test';
import { processStartTime } from '../../daemon/proc/stat.ts';
import { recoverTasks } from '../../daemon/tasks/recover.ts';
import { repoState, waitPidGone } from '../helpers/state.ts';
import { TEST_HOST_ID } from '../helpers/store.ts';
import { taskParts, type TaskParts } from '../helpers/tasks.ts';

// A process group of its own, as a setup command runs: a shell leading a background sleep.
function spawnGroup(t: TestContext): number {
  const child = spawn('sh', ['-c', 'sleep 60 & wait'], { detached: true, stdio: 'ignore' });
  child.unref();
  t.after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  return child.pid!;
}

// A task left `setting_up` by a stopped daemon, its first command recorded as running `pid`.
async function interruptedSetup(parts: TaskParts, pid: number, pidStart: string | null, hostId?: string) {
  const project = await parts.project(undefined, hostId);
  const id = randomUUID();
  await parts.tasks.insert(
    { id, project_id: project.id, name: 'cut', branch: 'grove/cut', worktree_path: '.grove/worktrees/cut/', base: 'main', base_commit: 'a'.repeat(40), status: 'setting_up' },
    {},
  );
  await parts.setupLog.commandStarted(id, 0, 'sleep 60', new Date().toISOString());
  await parts.setupLog.commandSpawned(id, 0, pid, pidStart);
  return id;
}

test('tasks/recover: what a killed daemon left is undone or stopped', async (t) => {
  const parts = await taskParts(t);
  // No archive is left under way in these cases (the end-to-end teardown test covers that).
  // A worktree made with its creation intent recorded, as a creation does before its row.
  const madeWithIntent = async (slug: string) => {
    const project = await parts.project();
    const id = randomUUID();
    const made = await parts.pool.run('createWorktree', { repo: project.path, slug, taken: [], intent: { id, file: parts.journal.fileFor(id) }, timeout: { ms: 60_000, detail: 'took too long' } });
    assert.ok(made.ok);
    return { project, id, made };
  };
  const recover = () => recoverTasks({ ...parts, finishArchive: async (id) => assert.fail(`nothing to finish, got ${id}`), gitTimeoutS: 60, hostId: TEST_HOST_ID });

  await t.test('a creation without a row is undone from its intent: no branch, no worktree, no intent', async () => {
    const { project, id, made } = await madeWithIntent('cut-short');
    assert.deepEqual(repoState(project.path).branches, ['grove/cut-short', 'main']);
    await recover();
    assert.deepEqual(repoState(project.path), { branches: ['main'], worktrees: [], folders: [] });
    assert.deepEqual(parts.journal.pending(), []);
  });

  await t.test('an intent whose row was stored is only forgotten; a torn intent too', async () => {
    const { project, id, made } = await madeWithIntent('kept');
    const { branch, worktree_path, base, base_commit } = made;
    await parts.tasks.insert({ id, project_id: project.id, name: 'kept', branch, worktree_path, base, base_commit, status: 'ready' }, {});
    writeFileSync(parts.journal.fileFor(randomUUID()), '{"id":');
    await recover();
    assert.deepEqual(parts.journal.pending(), []);
    assert.deepEqual(repoState(project.path), { branches: ['grove/kept', 'main'], worktrees: ['.grove/worktrees/kept/'], folders: ['kept'] });
  });

  await t.test("a warm pool slot's intent whose row was stored is only forgotten: the slot keeps its worktree", async () => {
    const { project, id, made } = await madeWithIntent('pool-slot');
    const { branch, worktree_path, base, base_commit } = made;
    await parts.tasks.insert({ id, project_id: project.id, name: 'pool-slot', branch, worktree_path, base, base_commit, status: 'ready' }, {}, '{}');
    await recover();
    assert.deepEqual(parts.journal.pending(), []);
    assert.deepEqual(repoState(project.path), { branches: ['grove/pool-slot', 'main'], worktrees: ['.grove/worktrees/pool-slot/'], folders: ['pool-slot'] });
  });

  await t.test("an interrupted setup: its process group is stopped, the task setup_failed, the log says why", async (t) => {
    const pid = spawnGroup(t);
    const id = await interruptedSetup(parts, pid, processStartTime(pid));
    await recover();
    await waitPidGone(pid, 10_000);
    assert.equal((await parts.tasks.get(id))?.status, 'setup_failed');
    const [cmd] = await parts.setupLog.commands(id);
    assert.ok(cmd?.ended_at, 'the command is ended');
    assert.match((await parts.setupLog.lines(id)).at(-1)?.text ?? '', /setup interrupted/);
  });

  await t.test('a recorded pid now used by another process (start time differs) is never signalled', async (t) => {
    const pid = spawnGroup(t);
    const id = await interruptedSetup(parts, pid, 'not-its-start-time');
    await recover();
    assert.equal((await parts.tasks.get(id))?.status, 'setup_failed');
    assert.notEqual(processStartTime(pid), null, 'the process lives on');
  });

  await t.test("on a shared store, another host's setup is its own: never stopped, marked or logged by this host", async (t) => {
    const other = '00000000-0000-4000-8000-000000000002';
    const pid = spawnGroup(t);
    const id = await interruptedSetup(parts, pid, processStartTime(pid), other);
    await recover();
    assert.equal((await parts.tasks.get(id))?.status, 'setting_up');
    assert.notEqual(processStartTime(pid), null, 'its process lives on');
    const [cmd] = await parts.setupLog.commands(id);
    assert.equal(cmd?.ended_at, null, 'its command is not ended');
    // Its own host, restarting, recovers it.
    await recoverTasks({ ...parts, finishArchive: async () => {}, gitTimeoutS: 60, hostId: other });
    await waitPidGone(pid, 10_000);
    assert.equal((await parts.tasks.get(id))?.status, 'setup_failed');
  });
});
