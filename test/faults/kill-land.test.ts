import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { consistentState } from '../helpers/state.ts';
import { gate, killAll, slowRepo } from '../helpers/kill.ts';

const porcelain = (dir: string) => execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' });
const gitPath = (dir: string, what: string) => git(dir, 'rev-parse', '--path-format=absolute', '--git-path', what);

function commitFile(dir: string, file: string, text: string): string {
  writeFileSync(path.join(dir, file), text);
  git(dir, 'add', file);
  git(dir, 'commit', '-qm', `edit ${file}`);
  return git(dir, 'rev-parse', 'HEAD');
}

async function newTask(d: TestDaemon, projectId: string, repo: string, name: string) {
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, name } });
  assert.equal(r.status, 201, r.text);
  return { ...r.json, wt: path.join(repo, r.json.worktree_path) };
}

const putRight = (d: TestDaemon, task: string) => d.logs.find((l) => l?.msg === 'put right a landing that was interrupted' && l.task === task);

test('daemon and git killed with SIGKILL mid-rebase: the next start aborts it; the branch, index and files are as they were', async (t) => {
  const d1 = await startDaemon(t);
  const { repo, gate: g } = slowRepo(t);
  const project = await addProject(d1, repo);
  const task = await newTask(d1, project.id, repo, 'rebased');
  const head = commitFile(task.wt, 'mine.txt', 'mine\n');
  commitFile(repo, 'slow.txt', 'b\n');

  g.arm();
  const pending = d1.socket('POST', `/api/tasks/${task.id}/rebase`).catch((e: Error) => e);
  await g.entered();
  await killAll(d1, repo);
  assert.ok((await pending) instanceof Error, 'the request died with the daemon');
  assert.ok(existsSync(gitPath(task.wt, 'rebase-merge')), 'the kill left a rebase in progress');
  assert.notEqual(porcelain(task.wt), '', 'and half-written files');

  const d2 = await startDaemon(t, { home: d1.home });
  for (const what of ['rebase-merge', 'rebase-apply', 'ORIG_HEAD.lock', 'index.lock', 'HEAD.lock']) assert.ok(!existsSync(gitPath(task.wt, what)), `${what} left`);
  assert.ok(!existsSync(gitPath(task.wt, `refs/heads/${task.branch}.lock`)));
  assert.equal(git(task.wt, 'rev-parse', 'HEAD'), head);
  assert.equal(git(task.wt, 'symbolic-ref', 'HEAD'), `refs/heads/${task.branch}`);
  assert.equal(porcelain(task.wt), '');
  assert.equal(readFileSync(path.join(task.wt, 'mine.txt'), 'utf8'), 'mine\n');
  // Nothing for a commit to record: no revert of the task's work.
  const c = await d2.socket('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'after the crash' } });
  assert.equal(c.status, 409, c.text);
  assert.equal(c.json.code, 'NOTHING_TO_COMMIT');
  // The rebase works again.
  const again = await d2.socket('POST', `/api/tasks/${task.id}/rebase`);
  assert.equal(again.status, 200, again.text);
  assert.equal(git(task.wt, 'rev-parse', 'HEAD^'), git(repo, 'rev-parse', 'main'));
  assert.equal(putRight(d2, task.id)?.outcome, 'undone');
  assert.deepEqual((await consistentState(d2, repo, project.id)).problems, []);
});

test('git killed mid-rebase while the daemon lives: what it left is put right before the answer', async (t) => {
  const d = await startDaemon(t);
  const { repo, gate: g } = slowRepo(t);
  const project = await addProject(d, repo);
  const task = await newTask(d, project.id, repo, 'cut');
  const head = commitFile(task.wt, 'mine.txt', 'mine\n');
  commitFile(repo, 'slow.txt', 'b\n');

  g.arm();
  const pending = d.socket('POST', `/api/tasks/${task.id}/rebase`);
  await g.entered();
  await killAll(null, repo);
  const r = await pending;
  assert.ok(r.status >= 400, r.text);
  assert.ok(!existsSync(gitPath(task.wt, 'rebase-merge')));
  assert.ok(!existsSync(gitPath(task.wt, 'index.lock')));
  assert.equal(git(task.wt, 'rev-parse', 'HEAD'), head);
  assert.equal(porcelain(task.wt), '');
  assert.match(r.json.detail, /grove then undid what it had begun$/);
  assert.equal((await d.socket('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'x' } })).json.code, 'NOTHING_TO_COMMIT');
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
});

test('daemon and git killed with SIGKILL while a merge writes the files of the checked-out base: the next start undoes it', async (t) => {
  const d1 = await startDaemon(t);
  const { repo, gate: g } = slowRepo(t);
  const project = await addProject(d1, repo);
  const task = await newTask(d1, project.id, repo, 'merged');
  commitFile(task.wt, 'new.txt', 'new\n');
  const tip = commitFile(task.wt, 'slow.txt', 'task\n');
  const old = git(repo, 'rev-parse', 'main');

  g.arm();
  const pending = d1.socket('POST', `/api/tasks/${task.id}/merge`).catch((e: Error) => e);
  await g.entered();
  await killAll(d1, repo);
  assert.ok((await pending) instanceof Error);
  assert.ok(existsSync(gitPath(repo, 'index.lock')), 'the kill left the index locked');

  const d2 = await startDaemon(t, { home: d1.home });
  assert.equal(git(repo, 'rev-parse', 'main'), old);
  assert.equal(git(repo, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
  assert.equal(porcelain(repo), '');
  assert.equal(readFileSync(path.join(repo, 'slow.txt'), 'utf8'), 'a\n');
  assert.ok(!existsSync(path.join(repo, 'new.txt')));
  for (const what of ['index.lock', 'HEAD.lock', 'refs/heads/main.lock']) assert.ok(!existsSync(gitPath(repo, what)), `${what} left`);
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'the user commits on main');
  assert.equal((await d2.socket('GET', `/api/tasks/${task.id}`)).json.merged_commit, null);
  // The merge lands when asked again.
  const m = await d2.socket('POST', `/api/tasks/${task.id}/merge`);
  assert.equal(m.status, 200, m.text);
  assert.equal(git(repo, 'rev-parse', 'main^2'), tip);
  assert.equal(porcelain(repo), '');
  assert.equal(putRight(d2, task.id)?.outcome, 'undone');
  assert.deepEqual((await consistentState(d2, repo, project.id)).problems, []);
});

test('daemon and git killed with SIGKILL between the checkout update and the ref update of a merge: the next start finishes it', async (t) => {
  const d1 = await startDaemon(t);
  const repo = makeRepo(t, { files: { 'f.txt': 'f\n' } });
  // git holds HEAD.lock and refs/heads/main.lock when it runs this hook, after read-tree ended.
  const g = gate(t, `[ "$1" = prepared ] && grep -q ' refs/heads/main$'`, 'exit 0');
  const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
  writeFileSync(hook, `#!/bin/sh\nexec '${g.script}' "$@"\n`);
  chmodSync(hook, 0o755);
  const project = await addProject(d1, repo);
  const task = await newTask(d1, project.id, repo, 'landed');
  const tip = commitFile(task.wt, 'new.txt', 'new\n');
  const old = git(repo, 'rev-parse', 'main');

  g.arm();
  const pending = d1.socket('POST', `/api/tasks/${task.id}/merge`).catch((e: Error) => e);
  await g.entered();
  await killAll(d1, repo);
  assert.ok((await pending) instanceof Error);
  // The state of the issue: the merge staged on the old tip, the ref and HEAD locked.
  assert.equal(git(repo, 'rev-parse', 'main'), old);
  assert.equal(porcelain(repo), 'A  new.txt\n');
  assert.ok(existsSync(gitPath(repo, 'HEAD.lock')) && existsSync(gitPath(repo, 'refs/heads/main.lock')));

  const d2 = await startDaemon(t, { home: d1.home });
  assert.equal(git(repo, 'rev-parse', 'main'), tip);
  assert.equal(git(repo, 'rev-parse', 'HEAD'), tip);
  assert.equal(porcelain(repo), '');
  for (const what of ['index.lock', 'HEAD.lock', 'refs/heads/main.lock']) assert.ok(!existsSync(gitPath(repo, what)), `${what} left`);
  assert.equal((await d2.socket('GET', `/api/tasks/${task.id}`)).json.merged_commit, tip, 'the task is merged');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'the user commits on main');
  assert.equal(putRight(d2, task.id)?.outcome, 'finished');
  assert.deepEqual((await consistentState(d2, repo, project.id)).problems, []);
});

test('an interrupted merge whose checkout the user changed since: kept with its intent, review writes of the project refused until the index is put back', async (t) => {
  const d1 = await startDaemon(t);
  const repo = makeRepo(t, { files: { 'f.txt': 'f\n' } });
  const project = await addProject(d1, repo);
  const task = await newTask(d1, project.id, repo, 'stuck');
  const next = commitFile(task.wt, 'new.txt', 'new\n');
  const old = git(repo, 'rev-parse', 'main');
  await d1.stop();
  // What a kill between read-tree and update-ref leaves, then a file the user staged.
  git(repo, 'read-tree', '-m', '-u', old, next);
  writeFileSync(path.join(repo, 'mine.txt'), 'the user\n');
  git(repo, 'add', 'mine.txt');
  const intent = { kind: 'merge', task: task.id, repo, checkout: repo, ref: 'refs/heads/main', old, next };
  writeFileSync(path.join(d1.home, 'data', 'journal', `${task.id}.merge.json`), JSON.stringify(intent));

  const d2 = await startDaemon(t, { home: d1.home });
  assert.ok(d2.logs.find((l) => l?.msg?.startsWith('an interrupted landing cannot be put right') && l.task === task.id));
  for (const [verb, body] of [['merge', {}], ['commit', { message: 'm' }], ['rebase', undefined]] as const) {
    const r = await d2.socket('POST', `/api/tasks/${task.id}/${verb}`, body ? { body } : {});
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.code, 'LANDING_INTERRUPTED');
    assert.match(r.json.detail, /git read-tree/);
  }
  assert.equal(git(repo, 'rev-parse', 'main'), old, 'nothing moved');
  assert.match(porcelain(repo), /^A {2}mine\.txt$/m);

  // The user puts the index back as the detail says (their file stays): the merge is undone, then lands.
  git(repo, 'read-tree', old);
  const m = await d2.socket('POST', `/api/tasks/${task.id}/merge`);
  assert.equal(m.status, 200, m.text);
  assert.equal(git(repo, 'rev-parse', 'main'), next);
  assert.equal(readFileSync(path.join(repo, 'mine.txt'), 'utf8'), 'the user\n');
  assert.equal(porcelain(repo), '?? mine.txt\n');
});
