import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon } from './helpers/daemon.ts';
import { branches, git, makeRepo, makeTempDir, worktrees } from './helpers/git.ts';

// Tests that need no settings of their own share one daemon (each makes its own repository).
const daemon = sharedDaemon();

test('archiving keeps the branch and its commits, refuses dirty work without force, releases ports', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { 'a.txt': 'a\n', '.grove.json': JSON.stringify({ ports: [3000] }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'work' } })).json;
  const wt = path.join(repo, task.worktree_path);
  writeFileSync(path.join(wt, 'a.txt'), 'changed\n');
  git(wt, 'commit', '-q', '-am', 'work in progress');
  const commit = git(wt, 'rev-parse', 'HEAD');

  // Untracked file: dirty.
  writeFileSync(path.join(wt, 'new.txt'), 'x');
  let r = await d.tcp('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.code, 'WORKTREE_DIRTY');
  assert.match(r.json.detail, /new\.txt/);
  // Modified tracked file: dirty.
  rmSync(path.join(wt, 'new.txt'));
  writeFileSync(path.join(wt, 'a.txt'), 'uncommitted\n');
  r = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.json.code, 'WORKTREE_DIRTY');
  // Nothing changed by the refusals.
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'uncommitted\n');
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.status, 'ready');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}`)).json.ports, task.ports);

  r = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.status, 'archived');
  assert.deepEqual(r.json.ports, {});
  assert.match(r.json.archived_at, /Z$/);
  assert.ok(!existsSync(wt));
  assert.deepEqual(worktrees(repo), [repo]);
  assert.ok(branches(repo).includes(task.branch), 'branch kept');
  assert.equal(git(repo, 'rev-parse', task.branch), commit, 'commits kept');
  assert.equal(git(repo, 'status', '--porcelain'), '', 'main checkout clean');
  assert.equal(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n', 'main checkout untouched');

  // Archiving again answers the archived task.
  const again = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(again.status, 200);
  assert.deepEqual(again.json, r.json);
});

test('a clean worktree is archived without force', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'clean' } })).json;
  const r = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(worktrees(repo), [repo]);
});

test('a worktree folder replaced by a symlink: the link goes, its target is untouched', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'linked' } })).json;
  const wt = path.join(repo, task.worktree_path).replace(/\/$/, '');
  // Someone else's files, with a dirty git work tree of their own.
  const elsewhere = makeRepo(t, { files: { 'precious.txt': 'keep me\n' } });
  writeFileSync(path.join(elsewhere, 'untracked.txt'), 'mine');
  rmSync(wt, { recursive: true, force: true });
  symlinkSync(elsewhere, wt);

  for (const force of ['', '?force=true']) {
    const r = await d.socket('DELETE', `/api/tasks/${task.id}${force}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'archived');
  }
  assert.ok(!existsSync(wt), 'the symlink is gone');
  assert.equal(readFileSync(path.join(elsewhere, 'precious.txt'), 'utf8'), 'keep me\n');
  assert.equal(readFileSync(path.join(elsewhere, 'untracked.txt'), 'utf8'), 'mine');
  assert.equal(git(elsewhere, 'status', '--porcelain'), '?? untracked.txt');
  assert.deepEqual(worktrees(repo), [repo]);
  assert.ok(branches(repo).includes(task.branch));
});

test('a symlinked .grove/worktrees folder is never followed', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'a' } })).json;
  const outside = makeTempDir(t);
  mkdirSync(path.join(outside, 'a'));
  writeFileSync(path.join(outside, 'a', 'file'), 'x');
  rmSync(path.join(repo, '.grove', 'worktrees'), { recursive: true, force: true });
  symlinkSync(outside, path.join(repo, '.grove', 'worktrees'));
  const r = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(r.status, 200, r.text);
  assert.equal(readFileSync(path.join(outside, 'a', 'file'), 'utf8'), 'x');
  // And no new worktree is made through it.
  const refused = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'b' } });
  assert.equal(refused.status, 422);
  assert.equal(refused.json.code, 'CONFIG_INVALID');
  assert.deepEqual(branches(repo), ['grove/a', 'main']);
});

test('a project with live tasks cannot be removed: 409 PROJECT_HAS_TASKS', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } })).json;
  const r = await d.socket('DELETE', `/api/projects/${project.id}`);
  assert.equal(r.status, 409);
  assert.equal(r.json.code, 'PROJECT_HAS_TASKS');
  assert.equal((await d.socket('GET', `/api/projects/${project.id}`)).status, 200);
  await d.socket('DELETE', `/api/tasks/${task.id}`);
  // Read once archived: the daemon keeps tasks it has read, and the removal must forget them.
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.status, 'archived');
  assert.equal((await d.socket('DELETE', `/api/projects/${project.id}`)).status, 204);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).status, 404, "archived tasks go with their project");
  assert.ok(branches(repo).includes(task.branch), 'the branch stays in the repository');
});
