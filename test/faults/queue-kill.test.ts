import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { gate, killAll, slowRepo } from '../helpers/kill.ts';
import { commitFile, enqueue, newTask, settledCheckouts, waitQueueEvent } from '../helpers/queue.ts';
import { consistentState, pidsWorkingIn, waitPidGone } from '../helpers/state.ts';

const porcelain = (dir: string) => execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' });
const gitPath = (dir: string, what: string) => git(dir, 'rev-parse', '--path-format=absolute', '--git-path', what);

test('daemon killed with SIGKILL mid-check: the next start stops the check it left, the entry keeps its place and lands cleanly', async (t) => {
  const g = gate(t, 'true', 'exit 0');
  const repo = makeRepo(t, { files: { 'f.txt': 'f\n', '.grove.json': JSON.stringify({ check: [`'${g.script}'`] }) } });
  const d1 = await startDaemon(t);
  const project = await addProject(d1, repo);
  const first = await newTask(d1, project.id, repo, 'first');
  const second = await newTask(d1, project.id, repo, 'second');
  commitFile(first.wt, 'first.txt', 'first\n');
  commitFile(second.wt, 'second.txt', 'second\n');
  const before = git(repo, 'rev-parse', 'main');

  g.arm();
  await enqueue(d1, project.id, { task_id: first.id });
  await enqueue(d1, project.id, { task_id: second.id });
  await g.entered();
  // A kill before the check's process is in the store would leave it to no one: wait for that.
  await d1.waitForLog((l) => l.msg === "a check's process is recorded" && l.task === first.id);
  const check = pidsWorkingIn(path.resolve(first.wt));
  assert.ok(check.length > 0, 'the check runs in the worktree');
  assert.equal(await d1.stop('SIGKILL'), 'SIGKILL');
  assert.ok(check.every((pid) => existsSync(`/proc/${pid}`)), 'the check outlived the daemon');
  assert.equal(git(repo, 'rev-parse', 'main'), before, 'nothing merged yet');

  const d2 = await startDaemon(t, { home: d1.home });
  await Promise.all(check.map((pid) => waitPidGone(pid)));
  const landed = [await waitQueueEvent(d2, first.id, 'queue.landed'), await waitQueueEvent(d2, second.id, 'queue.landed')];
  assert.ok(landed[0].seq < landed[1].seq, 'the entry cut short kept its place');
  assert.equal(landed[0].data.tries, 2, 'its landing was begun again');
  assert.equal(git(repo, 'rev-parse', 'main'), landed[1].data.commit);
  assert.equal(readFileSync(path.join(repo, 'first.txt'), 'utf8'), 'first\n');
  assert.equal(readFileSync(path.join(repo, 'second.txt'), 'utf8'), 'second\n');
  assert.equal(porcelain(repo), '');
  settledCheckouts(repo, first.wt, second.wt);
  assert.ok(d2.logs.some((l) => l?.msg === 'landings of the merge queue cut short by a stop are tried again' && l.entries === 1));
  assert.deepEqual((await d2.socket('GET', `/api/projects/${project.id}/queue`)).json, []);
  assert.deepEqual((await consistentState(d2, repo, project.id)).problems, []);
});

test('daemon and git killed with SIGKILL mid-rebase: the next start aborts the rebase, then the queue lands the task cleanly', async (t) => {
  const { repo, gate: g } = slowRepo(t);
  const d1 = await startDaemon(t);
  const project = await addProject(d1, repo);
  const task = await newTask(d1, project.id, repo, 'rebased');
  const head = commitFile(task.wt, 'mine.txt', 'mine\n');
  const tip = commitFile(repo, 'slow.txt', 'b\n');

  g.arm();
  await enqueue(d1, project.id, { task_id: task.id });
  await g.entered();
  await killAll(d1, repo);
  assert.ok(existsSync(gitPath(task.wt, 'rebase-merge')), 'the kill left a rebase in progress');
  assert.equal(git(repo, 'rev-parse', 'main'), tip, 'main has not moved');

  const d2 = await startDaemon(t, { home: d1.home });
  const landed = await waitQueueEvent(d2, task.id, 'queue.landed');
  assert.equal(landed.data.tries, 2);
  assert.ok(d2.logs.some((l) => l?.msg === 'put right a landing that was interrupted' && l.task === task.id && l.outcome === 'undone'));
  assert.equal(git(repo, 'rev-parse', 'main'), landed.data.commit);
  assert.equal(git(repo, 'rev-parse', 'main^'), tip, 'rebased onto the new tip');
  assert.notEqual(landed.data.commit, head);
  assert.equal(readFileSync(path.join(repo, 'slow.txt'), 'utf8'), 'b\n');
  assert.equal(readFileSync(path.join(repo, 'mine.txt'), 'utf8'), 'mine\n');
  assert.equal(porcelain(repo), '');
  assert.equal(porcelain(task.wt), '');
  settledCheckouts(repo, task.wt);
  assert.deepEqual((await d2.socket('GET', `/api/projects/${project.id}/queue`)).json, []);
  assert.deepEqual((await consistentState(d2, repo, project.id)).problems, []);
});
