import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import type { ProjectPool } from '../../schemas/pool.ts';
import { createBaseWatch } from '../../daemon/projects/base-watch.ts';
import { createKeyedMutex } from '../../daemon/runtime/keyed-mutex.ts';
import { createTaskCreator, createTaskMaker } from '../../daemon/tasks/create.ts';
import { createSetupRunner } from '../../daemon/tasks/setup-run.ts';
import { createWarmPool } from '../../daemon/tasks/warm.ts';
import { branches, commitFile, git, makeTempDir } from '../helpers/git.ts';
import { taskParts } from '../helpers/tasks.ts';

test('tasks/warm: the pool follows its base', async (t) => {
  const parts = await taskParts(t);
  const setups = createSetupRunner({ ...parts, setupTimeoutS: 60 });
  const maker = createTaskMaker({ ...parts, setupTimeoutS: 60 });
  const bases = createBaseWatch({ log: parts.log });
  const perProject = createKeyedMutex();
  const warm = createWarmPool({ ...parts, maker, setups, bases, perProject, gitTimeoutS: 60 });
  const create = createTaskCreator({ ...parts, perProject, setup: setups, setupTimeoutS: 60, maker, claim: warm.claim });
  await warm.start();
  t.after(async () => {
    await warm.close();
    await bases.close();
  });

  // Slots (named pool-…) wait in their setup while `hold` exists; a task's own setup never waits.
  async function pooled(size: number, hold?: string) {
    const wait = hold ? `case "$GROVE_TASK_NAME" in pool-*) while [ -e '${hold}' ]; do sleep 0.05; done;; esac` : 'true';
    const project = await parts.project({ setup: ['echo "$GROVE_TASK_ID" > setup-ran.txt', wait], pool: { size } });
    void warm.sync(project.id);
    return project;
  }

  // The project's pool once `ok` holds of it: looked at now and at each step of a slot's setup
  // (the last change a slot goes through is its setup's end).
  function poolWhen(projectId: string, ok: (p: ProjectPool) => boolean, what: string): Promise<ProjectPool> {
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (err: unknown, p?: ProjectPool) => {
        if (done) return;
        done = true;
        off();
        clearTimeout(timer);
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve(p!);
      };
      const look = () =>
        void warm.list(projectId).then((p) => {
          if (ok(p)) finish(null, p);
        }, finish);
      const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), 60_000);
      const off = setups.progress.onAnyChange(look);
      look();
    });
  }
  const readyAt = (size: number, tip: string) => (p: ProjectPool) => p.slots.length === size && p.slots.every((s) => s.status === 'ready' && s.base_commit === tip);

  await t.test('a claim right after a commit never gets the old slot: the task starts at the new tip', async () => {
    const project = await pooled(1);
    const repo = project.path;
    const [old] = (await poolWhen(project.id, readyAt(1, git(repo, 'rev-parse', 'HEAD')), 'a ready slot')).slots;
    const tip = commitFile(repo, 'new.txt');
    const { task } = await create({ project_id: project.id, name: 'right after' });
    assert.notEqual(task.id, old!.id, 'not the slot made at the old tip');
    assert.equal(task.base_commit, tip);
    assert.equal(git(path.join(repo, task.worktree_path), 'rev-parse', 'HEAD'), tip, "the task's branch starts at the new tip");
    assert.ok(existsSync(path.join(repo, task.worktree_path, 'new.txt')));
  });

  await t.test('without a claim, every slot is replaced at the new tip, one at a time; the old ones are removed', async () => {
    const project = await pooled(2);
    const repo = project.path;
    const old = (await poolWhen(project.id, readyAt(2, git(repo, 'rev-parse', 'HEAD')), 'two ready slots')).slots;
    const tip = commitFile(repo, 'moved.txt');
    const fresh = (await poolWhen(project.id, readyAt(2, tip), 'both slots at the new tip')).slots;
    assert.ok(fresh.every((s) => !old.some((o) => o.id === s.id)), 'replaced, not the old ones');
    for (const o of old) {
      assert.ok(!existsSync(path.join(repo, '.grove', 'worktrees', `pool-${o.id.slice(0, 8)}`)), "the old slot's worktree is removed");
      assert.ok(!branches(repo).includes(`grove/pool-${o.id.slice(0, 8)}`), "the old slot's branch is removed");
    }
    // A claim now is pooled, at the new tip.
    const { task } = await create({ project_id: project.id, name: 'pooled at the tip' });
    assert.ok(fresh.some((s) => s.id === task.id));
    assert.equal(git(path.join(repo, task.worktree_path), 'rev-parse', 'HEAD'), tip);
  });

  await t.test("a move while a slot's setup runs stops that setup: the slot is made again at the new tip", async (t) => {
    const hold = path.join(makeTempDir(t), 'hold');
    writeFileSync(hold, '');
    const project = await pooled(1, hold);
    const repo = project.path;
    const [first] = (await poolWhen(project.id, (p) => p.slots.length === 1 && p.slots[0]!.status === 'setting_up', 'a slot in its setup')).slots;
    const tip = commitFile(repo, 'during-setup.txt');
    // Its setup still waits on `hold`: only a stop lets the pool move on to the new tip.
    const [next] = (await poolWhen(project.id, (p) => p.slots.length === 1 && p.slots[0]!.id !== first!.id && p.slots[0]!.base_commit === tip, 'a slot at the new tip')).slots;
    assert.equal(next!.status, 'setting_up');
    rmSync(hold);
    await poolWhen(project.id, readyAt(1, tip), 'the slot ready at the new tip');
  });

  await t.test('a slot whose setup failed stops the filling until the base moves: then it is made again at the new tip', async () => {
    // Slots' setups fail until the base has fixed.txt.
    const project = await parts.project({ setup: ['case "$GROVE_TASK_NAME" in pool-*) test -e fixed.txt;; esac'], pool: { size: 1 } });
    void warm.sync(project.id);
    const [failed] = (await poolWhen(project.id, (p) => p.slots.length === 1 && p.slots[0]!.status === 'setup_failed', 'a failed slot')).slots;
    const tip = commitFile(project.path, 'fixed.txt');
    const [slot] = (await poolWhen(project.id, readyAt(1, tip), 'a ready slot at the new tip')).slots;
    assert.notEqual(slot!.id, failed!.id);
  });

  await t.test('a checkout of another branch moves the default base: the slots follow it', async () => {
    const project = await pooled(1);
    const repo = project.path;
    await poolWhen(project.id, readyAt(1, git(repo, 'rev-parse', 'HEAD')), 'a ready slot');
    git(repo, 'checkout', '-q', '-b', 'release');
    const tip = commitFile(repo, 'release.txt');
    const [slot] = (await poolWhen(project.id, readyAt(1, tip), 'the slot at the tip of release')).slots;
    assert.equal(slot!.base, 'release');
  });
});
