import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { addProject, removeProject, ROOT, sharedDaemon, startDaemon, type Cleanup, type TestDaemon } from '../helpers/daemon.ts';
import { branches, commitFile, git, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { until } from '../helpers/store.ts';

// The warm pool (DESIGN §16). Most tests share one daemon, each with its own repository.
const daemon = sharedDaemon();

// Slots (named pool-…) wait in their setup while `hold` exists, so that a test decides when a
// refill may finish; a task's own setup never waits. Every setup writes the id and port it ran with.
function poolConfig(hold: string, pool: object, extra: object = {}) {
  return {
    setup: ['echo "$GROVE_TASK_ID $GROVE_PORT" > setup-ran.txt', `case "$GROVE_TASK_NAME" in pool-*) while [ -e '${hold}' ]; do sleep 0.05; done;; esac`],
    ports: [3000],
    pool,
    ...extra,
  };
}

// A repository added as a project of the file's daemon. That daemon outlives the test, so the
// project (its pool's loop and slots) is removed before the repository is: cleanups run in the
// order they are registered. `prepare` runs on the repository before it is added.
async function sharedProject(t: Cleanup, d: TestDaemon, files: Record<string, string>, prepare: (repo: string) => void = () => {}) {
  let id: string | undefined;
  t.after(async () => {
    if (id) await removeProject(d, id);
  });
  const repo = makeRepo(t, { files });
  prepare(repo);
  const project = await addProject(d, repo);
  id = project.id;
  return { repo, project };
}

// A repository with a pool of its own, added as a project of the file's daemon.
async function pooledProject(t: Cleanup, pool: object) {
  const d = await daemon();
  const hold = path.join(makeTempDir(t), 'hold');
  return { d, hold, ...(await sharedProject(t, d, { '.grove.json': JSON.stringify(poolConfig(hold, pool)) })) };
}

async function pool(d: TestDaemon, projectId: string): Promise<any> {
  const r = await d.socket('GET', `/api/projects/${projectId}/pool`);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

// Waits until the project has `n` ready slots (and no other), and returns them.
function readySlots(d: TestDaemon, projectId: string, n: number): Promise<any[]> {
  return until(async () => {
    const slots = (await pool(d, projectId)).slots;
    return slots.length === n && slots.every((s: any) => s.status === 'ready') && slots;
  }, `${n} ready slot(s)`, 60_000);
}

const taskEvents = async (d: TestDaemon, projectId: string) =>
  ((await d.socket('GET', `/api/events?project_id=${projectId}`)).json.events as any[]).filter((e) => e.type.startsWith('task.'));

test('a claim answers ready at once with the slot: its setup ran with the task id and ports; slots are in no list or event', async (t) => {
  const { d, hold, repo, project } = await pooledProject(t, { size: 1 });
  const [slot] = await readySlots(d, project.id, 1);
  assert.equal(slot.base, git(repo, 'rev-parse', '--abbrev-ref', 'HEAD'));
  assert.equal(slot.base_commit, git(repo, 'rev-parse', 'HEAD'));

  // Not a task to anyone but the pool: lists, a get, events.
  assert.deepEqual((await d.socket('GET', `/api/tasks?project_id=${project.id}`)).json, []);
  assert.ok(!(await d.socket('GET', '/api/tasks')).json.some((x: any) => x.id === slot.id));
  assert.equal((await d.socket('GET', `/api/tasks/${slot.id}`)).status, 404);
  assert.deepEqual(await taskEvents(d, project.id), []);

  // Refills wait from here, so that the claim's answer is the slot's alone.
  writeFileSync(hold, '');
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'Feature one' } });
  assert.equal(r.status, 201, r.text);
  const task = r.json;
  assert.equal(task.id, slot.id);
  assert.equal(task.status, 'ready');
  assert.equal(task.pooled, true);
  assert.equal(task.name, 'Feature one');
  assert.equal(task.branch, 'grove/feature-one');
  const wt = path.join(repo, task.worktree_path);
  assert.equal(readFileSync(path.join(wt, 'setup-ran.txt'), 'utf8'), `${task.id} ${task.ports['3000']}\n`, "the setup's work, with the task's own id and port");
  assert.equal(git(wt, 'symbolic-ref', '--short', 'HEAD'), 'grove/feature-one', 'the worktree is on the renamed branch');
  assert.ok(!branches(repo).some((b) => b.startsWith('grove/pool-') && b.endsWith(slot.id.slice(0, 8))), 'the placeholder branch is gone');
  const setup = (await d.socket('GET', `/api/tasks/${task.id}/setup`)).json;
  assert.deepEqual(setup.commands.map((c: any) => c.exit_code), [0, 0], "its setup log is the slot's");

  // One event for it, task.created, as for a cold task; it is listed from now on.
  const events = await taskEvents(d, project.id);
  assert.deepEqual(events.map((e) => [e.type, e.task_id, e.data.pooled]), [['task.created', task.id, true]]);
  assert.deepEqual((await d.socket('GET', `/api/tasks?project_id=${project.id}`)).json.map((x: any) => x.id), [task.id]);

  // A refill follows the claim: a new slot, set up (once let through), and still no task event for it.
  const refill = await until(async () => (await pool(d, project.id)).slots.find((s: any) => s.id !== task.id), 'a refill to start', 60_000);
  rmSync(hold);
  const [next] = await readySlots(d, project.id, 1);
  assert.equal(next.id, refill.id);
  assert.deepEqual((await taskEvents(d, project.id)).map((e) => e.task_id), [task.id]);
  assert.deepEqual((await d.socket('GET', `/api/tasks?project_id=${project.id}`)).json.map((x: any) => x.id), [task.id]);
});

test('10 concurrent creations on a pool of 2: 2 pooled, 8 cold, all ready, no slot given twice', async (t) => {
  const { d, hold, repo, project } = await pooledProject(t, { size: 2 });
  const slots = await readySlots(d, project.id, 2);
  writeFileSync(hold, '');

  const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: `c${i}` } })));
  for (const r of replies) assert.equal(r.status, 201, r.text);
  const tasks = replies.map((r) => r.json);
  assert.ok(tasks.every((x) => x.status === 'ready'));
  const pooled = tasks.filter((x) => x.pooled);
  assert.equal(pooled.length, 2);
  assert.deepEqual(pooled.map((x) => x.id).sort(), slots.map((s) => s.id).sort(), 'each slot given once');
  assert.equal(new Set(tasks.map((x) => x.id)).size, 10);
  assert.equal(new Set(tasks.map((x) => x.worktree_path)).size, 10);
  assert.equal(new Set(tasks.map((x) => x.branch)).size, 10);
  for (const x of tasks) {
    assert.equal(readFileSync(path.join(repo, x.worktree_path, 'setup-ran.txt'), 'utf8'), `${x.id} ${x.ports['3000']}\n`);
  }
  rmSync(hold);
  await readySlots(d, project.id, 2);
});

test('8 concurrent claims on a pool of 8 are all pooled: their renames take turns', async (t) => {
  const { d, hold, project } = await pooledProject(t, { size: 8 });
  const slots = await readySlots(d, project.id, 8);
  writeFileSync(hold, '');
  // Concurrent `git branch -m` in one repository share a temporary reflog file: unserialised,
  // some fail and their creations are made cold.
  const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: `p${i}` } })));
  for (const r of replies) assert.equal(r.status, 201, r.text);
  assert.deepEqual(replies.map((r) => r.json.pooled), Array(8).fill(true));
  assert.deepEqual(replies.map((r) => r.json.id).sort(), slots.map((s) => s.id).sort());
  rmSync(hold);
  await readySlots(d, project.id, 8);
});

test('a creation for another base, or with a branch that exists, is made cold and leaves the slot ready', async (t) => {
  const { d, repo, project } = await pooledProject(t, { size: 1 });
  const [slot] = await readySlots(d, project.id, 1);
  git(repo, 'branch', 'other');
  git(repo, 'branch', 'taken');
  const other = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'on other', base: 'other' } });
  assert.equal(other.status, 201, other.text);
  assert.equal(other.json.pooled, false);
  assert.equal(other.json.base, 'other');
  const taken = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'taken', branch: 'taken' } });
  assert.equal(taken.status, 409, taken.text);
  assert.equal(taken.json.code, 'BRANCH_EXISTS');
  assert.deepEqual((await pool(d, project.id)).slots.map((s: any) => [s.id, s.status]), [[slot.id, 'ready']], 'the slot was given back');
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'then pooled', branch: 'fresh', base: slot.base } });
  assert.equal(r.json.id, slot.id);
  assert.equal(r.json.branch, 'fresh');
  await readySlots(d, project.id, 1);
});

test('a cold creation while a refill runs is not held up by it', async (t) => {
  const d = await daemon();
  const hold = path.join(makeTempDir(t), 'hold');
  writeFileSync(hold, '');
  const { project } = await sharedProject(t, d, { '.grove.json': JSON.stringify(poolConfig(hold, { size: 1 })) });
  // The pool's first slot is held in its setup: the pool is filling and has nothing to give.
  await until(async () => (await pool(d, project.id)).slots[0]?.status === 'setting_up', 'a slot setting up', 60_000);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'cold' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status, 'ready');
  assert.equal(r.json.pooled, false);
  assert.equal((await pool(d, project.id)).slots[0].status, 'setting_up', 'the refill was still running');
  rmSync(hold);
  await readySlots(d, project.id, 1);
});

test('cold creations waiting for the project\'s turn go before a refill that waited longer', async (t) => {
  const d = await daemon();
  const dir = makeTempDir(t);
  const order = path.join(dir, 'order');
  // Every `git worktree add` of the repository writes its folder's name as it gets the project's
  // turn, and waits there while a hold-<name> file exists.
  const { repo, project } = await sharedProject(t, d, { '.grove.json': '{}' }, (repo) => {
    const hook = path.join(repo, '.git', 'hooks', 'post-checkout');
    writeFileSync(hook, `#!/bin/sh\nn=$(basename "$PWD")\necho "$n" >> '${order}'\nwhile [ -e '${dir}/hold-'"$n" ]; do sleep 0.05; done\n`);
    chmodSync(hook, 0o755);
  });
  const lines = () => (existsSync(order) ? readFileSync(order, 'utf8').split('\n').filter(Boolean) : []);
  // The daemon watches the new project's config once chokidar has listed its folder: saved
  // again until a save is seen, so that the pool's arrival below is not missed.
  await until(async () => {
    writeFileSync(path.join(repo, '.grove.json'), '{}');
    return d.logs.some((l) => l.msg === '.grove.json loaded' && typeof l.file === 'string' && l.file.startsWith(repo));
  }, 'the config watched', 60_000);

  writeFileSync(path.join(dir, 'hold-c1'), '');
  const c1 = d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'c1' } });
  await until(async () => lines().includes('c1'), 'c1 to hold the turn', 60_000);
  // The pool arrives while c1 holds the turn: its first slot waits for it.
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ pool: { size: 1 } }));
  await d.waitForLog((l) => l.project === project.id && l.msg === "a warm pool slot waits for the project's turn", 60_000);
  const later = [d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'c2' } }), d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'c3' } })];
  await until(async () => d.logs.filter((l) => l.project === project.id && l.msg === "a cold creation waits for the project's turn").length === 3, 'c2 and c3 to wait', 60_000);
  rmSync(path.join(dir, 'hold-c1'));
  for (const r of await Promise.all([c1, ...later])) {
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.pooled, false);
  }
  const [slot] = await readySlots(d, project.id, 1);
  const got = lines();
  assert.deepEqual(got.slice(0, 3), ['c1', 'c2', 'c3'], `the creations took their turns before the slot: ${got.join(', ')}`);
  assert.deepEqual(got.slice(3), [`pool-${slot.id.slice(0, 8)}`]);
});

test('removing the project removes its slots: worktrees, placeholder branches, and one mid-setup', async (t) => {
  const { d, hold, repo, project } = await pooledProject(t, { size: 2 });
  await readySlots(d, project.id, 2);
  writeFileSync(hold, '');
  // A claim, then its refill held in setup; the task is archived so that the project may go.
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } })).json;
  await until(async () => (await pool(d, project.id)).slots.some((s: any) => s.status === 'setting_up'), 'a refill setting up', 60_000);
  assert.equal((await d.socket('DELETE', `/api/tasks/${task.id}?force=true`)).status, 200);

  const r = await d.socket('DELETE', `/api/projects/${project.id}`);
  assert.equal(r.status, 204, r.text);
  assert.deepEqual(worktrees(repo), [repo]);
  assert.deepEqual(branches(repo).filter((b) => b.startsWith('grove/pool-')), []);
  const left = existsSync(path.join(repo, '.grove', 'worktrees')) ? readdirSync(path.join(repo, '.grove', 'worktrees')) : [];
  assert.deepEqual(left.filter((f) => f.startsWith('pool-')), [], 'no slot folder left');
});

test('removing pool from .grove.json removes its slots, one in its setup too', async (t) => {
  const d = await daemon();
  const hold = path.join(makeTempDir(t), 'hold');
  writeFileSync(hold, '');
  const { repo, project } = await sharedProject(t, d, { '.grove.json': JSON.stringify(poolConfig(hold, { size: 1 })) });
  // Held in its setup (which would never end): removing the pool stops it.
  await until(async () => (await pool(d, project.id)).slots[0]?.status === 'setting_up', 'a slot setting up', 60_000);
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ setup: ['true'] }));
  await until(async () => (await pool(d, project.id)).slots.length === 0 && worktrees(repo).length === 1, 'the slot to go', 60_000);
  assert.deepEqual(branches(repo).filter((b) => b.startsWith('grove/pool-')), []);
  assert.equal((await pool(d, project.id)).size, 0);
});

test('a bad pool in .grove.json is refused with CONFIG_INVALID and its path', async (t) => {
  const d = await daemon();
  for (const [bad, where] of [
    [{ size: 0 }, '/pool/size'],
    [{ size: 9 }, '/pool/size'],
    [{ size: 1.5 }, '/pool/size'],
    [{}, '/pool/size'],
    [{ size: 1, ttl_s: 0 }, '/pool/ttl_s'],
    [{ size: 1, spare: true }, '/pool/spare'],
  ] as const) {
    const { project } = await sharedProject(t, d, { '.grove.json': JSON.stringify({ pool: bad }) });
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.code, 'CONFIG_INVALID');
    assert.ok(r.json.errors.some((e: any) => e.path === where), `${JSON.stringify(bad)}: ${JSON.stringify(r.json.errors)}`);
    assert.deepEqual((await pool(d, project.id)).slots, [], 'no slot for an invalid config');
  }
});

test('slots survive a restart; one cut short in its setup is dropped and made again, never claimed', async (t) => {
  const hold = path.join(makeTempDir(t), 'hold');
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(poolConfig(hold, { size: 2 })) } });
  const d = await startDaemon(t);
  const project = await addProject(d, repo);
  const [first] = await until(async () => {
    const slots = (await pool(d, project.id)).slots;
    return slots.length === 1 && slots[0].status === 'ready' && slots;
  }, 'the first slot ready', 60_000);
  // The second one is held in its setup when the daemon is killed.
  writeFileSync(hold, '');
  const cut = await until(async () => (await pool(d, project.id)).slots.find((s: any) => s.status === 'setting_up'), 'the second slot setting up', 60_000);
  await d.stop('SIGKILL');

  const again = await startDaemon(t, { home: d.home });
  const after = await until(async () => {
    const slots = (await pool(again, project.id)).slots;
    return !slots.some((s: any) => s.id === cut.id) && slots;
  }, 'the cut slot to be dropped', 60_000);
  assert.equal(after[0].id, first.id, 'the ready slot survived');
  assert.ok(!existsSync(path.join(repo, '.grove', 'worktrees', `pool-${cut.id.slice(0, 8)}`)), "the cut slot's folder is gone");
  rmSync(hold);
  const slots = await readySlots(again, project.id, 2);
  assert.equal(slots[0].id, first.id);

  const r = await again.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'after restart' } });
  assert.equal(r.json.id, first.id);
  assert.equal(r.json.pooled, true);
  // Stopped once its refill is done, before the repository is removed.
  await readySlots(again, project.id, 2);
  await again.stop();
});

test('a change of .grove.json replaces every slot', async (t) => {
  const { d, hold, repo, project } = await pooledProject(t, { size: 2 });
  const old = await readySlots(d, project.id, 2);
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify(poolConfig(hold, { size: 2 }, { env: { CHANGED: 'yes' } })));
  const fresh = await until(async () => {
    const slots = (await pool(d, project.id)).slots;
    return slots.length === 2 && slots.every((s: any) => s.status === 'ready' && !old.some((o) => o.id === s.id)) && slots;
  }, 'both slots replaced', 60_000);
  for (const o of old) assert.ok(!existsSync(path.join(repo, '.grove', 'worktrees', `pool-${o.id.slice(0, 8)}`)));
  assert.equal(fresh.length, 2);
});

test('a change of .grove.json that is not what slots are made with (agents, rules, automations) keeps them', async (t) => {
  const { d, hold, repo, project } = await pooledProject(t, { size: 1 });
  const [slot] = await readySlots(d, project.id, 1);
  // This daemon has no agent installed: the automation is seen and refused (logged), which is
  // enough to know the change was read.
  const automations = { nightly: { schedule: { cron: '0 3 * * *', timezone: 'UTC' }, session: { prompt: 'tidy up' } } };
  const seen = (l: any) => l.project === project.id && l.name === 'nightly';
  await until(async () => {
    writeFileSync(path.join(repo, '.grove.json'), JSON.stringify(poolConfig(hold, { size: 1 }, { allow: ['Bash(ls)'], automations })));
    return d.waitForLog(seen, 1000).then(() => true, () => false);
  }, 'the change seen', 60_000);
  assert.deepEqual((await pool(d, project.id)).slots.map((s: any) => [s.id, s.status]), [[slot.id, 'ready']], 'the same slot');
  // A claim compares the slot's config with the file's now: it is handed out.
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'after the change' } });
  assert.deepEqual([r.status, r.json.pooled, r.json.id], [201, true, slot.id], r.text);
});

test('a .grove.json seen half-written (truncated, then written) is followed to what was written', async (t) => {
  const { d, hold, repo, project } = await pooledProject(t, { size: 1 });
  await readySlots(d, project.id, 1);
  const file = path.join(repo, '.grove.json');
  // Opening truncates: the daemon reads an empty, invalid config, and the write comes after.
  const fd = openSync(file, 'w');
  await d.waitForLog((l) => typeof l.file === 'string' && l.file.startsWith(repo) && /^\.grove\.json is invalid/.test(l.msg), 60_000);
  writeSync(fd, JSON.stringify(poolConfig(hold, { size: 2 })));
  closeSync(fd);
  assert.equal((await readySlots(d, project.id, 2)).length, 2);
});

test('a slot whose base moved is not handed out: the task is made cold at the new tip, and the slot is replaced', async (t) => {
  const { d, hold, repo, project } = await pooledProject(t, { size: 1 });
  const [old] = await readySlots(d, project.id, 1);
  // The replacement the commit starts waits in its setup: the claim can only be cold.
  writeFileSync(hold, '');
  const tip = commitFile(repo, 'new.txt');
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'after move' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.pooled, false);
  assert.notEqual(r.json.id, old.id);
  assert.equal(r.json.base_commit, tip);
  assert.ok(existsSync(path.join(repo, r.json.worktree_path, 'new.txt')));
  rmSync(hold);
  const [next] = await until(async () => {
    const slots = (await pool(d, project.id)).slots;
    return slots.length === 1 && slots[0].id !== old.id && slots[0].status === 'ready' && slots;
  }, 'the slot replaced at the new tip', 60_000);
  assert.equal(next.base_commit, tip);
});

test('after a commit on the base, the slots move to the new tip with no claim; a claim then is pooled at that tip', async (t) => {
  const { d, repo, project } = await pooledProject(t, { size: 2 });
  const old = await readySlots(d, project.id, 2);
  const tip = commitFile(repo, 'moved.txt');
  const fresh = await until(async () => {
    const slots = (await pool(d, project.id)).slots;
    return slots.length === 2 && slots.every((s: any) => s.status === 'ready' && s.base_commit === tip) && slots;
  }, 'both slots at the new tip', 60_000);
  assert.ok(fresh.every((s: any) => !old.some((o) => o.id === s.id)), 'replaced');
  for (const o of old) assert.ok(!branches(repo).includes(`grove/pool-${o.id.slice(0, 8)}`), "the old slot's branch is removed");
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'at the tip' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.pooled, true);
  assert.equal(r.json.base_commit, tip);
  assert.equal(git(path.join(repo, r.json.worktree_path), 'rev-parse', 'HEAD'), tip);
});

test('a slot whose folder vanished is dropped, never a failed claim', async (t) => {
  const { d, repo, project } = await pooledProject(t, { size: 1 });
  const [old] = await readySlots(d, project.id, 1);
  rmSync(path.join(repo, '.grove', 'worktrees', `pool-${old.id.slice(0, 8)}`), { recursive: true, force: true });
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'no folder' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status, 'ready');
  assert.equal(r.json.pooled, false);
  assert.notEqual(r.json.id, old.id);
  const [next] = await until(async () => {
    const slots = (await pool(d, project.id)).slots;
    return slots.length === 1 && slots[0].id !== old.id && slots[0].status === 'ready' && slots;
  }, 'a new slot', 60_000);
  assert.ok(existsSync(path.join(repo, '.grove', 'worktrees', `pool-${next.id.slice(0, 8)}`)));
  assert.ok(!branches(repo).includes(`grove/pool-${old.id.slice(0, 8)}`), "the vanished slot's branch is removed");
});

test('a slot older than ttl_s is replaced', async (t) => {
  const { d, repo, project } = await pooledProject(t, { size: 1, ttl_s: 1 });
  const [old] = await readySlots(d, project.id, 1);
  const next = await until(async () => (await pool(d, project.id)).slots.find((s: any) => s.id !== old.id), 'a replacement', 60_000);
  assert.ok(Date.parse(next.created_at) - Date.parse(old.created_at) >= 1000, 'replaced once ttl_s had passed');
  assert.equal((await pool(d, project.id)).ttl_s, 1);
  // The pool goes on replacing: removing the project stops it.
  assert.equal((await d.socket('DELETE', `/api/projects/${project.id}`)).status, 204);
  assert.deepEqual(worktrees(repo), [repo]);
});

test('grove pool shows the slots, as a table and as --json; grove task ls does not', async (t) => {
  const { d, project } = await pooledProject(t, { size: 1 });
  const [slot] = await readySlots(d, project.id, 1);
  const grove = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, [path.join(ROOT, 'bin', 'grove.js'), ...args], { env: { ...process.env, GROVE_HOME: d.home } })).stdout;
  const json = JSON.parse(await grove('pool', project.name, '--json'));
  assert.equal(json.size, 1);
  assert.deepEqual(json.slots.map((s: any) => [s.id, s.status]), [[slot.id, 'ready']]);
  const shown = await grove('pool', project.name);
  assert.match(shown, new RegExp(`pool of 1`));
  assert.match(shown, new RegExp(`${slot.id.slice(0, 8)}\\s+ready\\s+${slot.base}\\s+${slot.base_commit.slice(0, 10)}`));
  assert.doesNotMatch(await grove('task', 'ls', project.name), new RegExp(slot.id.slice(0, 8)));
});

test('a slot whose setup fails stays listed setup_failed, is not made again and again, and a creation is cold', async (t) => {
  const d = await daemon();
  const { project } = await sharedProject(t, d, { '.grove.json': JSON.stringify({ setup: ['case "$GROVE_TASK_NAME" in pool-*) exit 3;; esac'], pool: { size: 2 } }) });
  await d.waitForLog((l) => l.project === project.id && /failed its setup/.test(l.msg ?? ''), 60_000);
  const [failed, ...others] = (await pool(d, project.id)).slots;
  assert.equal(failed.status, 'setup_failed');
  assert.deepEqual(others, [], 'the filling stopped at the failure');
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'cold' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.status, 'ready');
  assert.equal(r.json.pooled, false);
  assert.deepEqual((await pool(d, project.id)).slots.map((s: any) => [s.id, s.status]), [[failed.id, 'setup_failed']]);
});
