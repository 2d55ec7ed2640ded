import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon } from './helpers/daemon.ts';
import { branches, git, gitSucceeds, makeRepo, worktrees } from './helpers/git.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('a task on a fresh repository is ready, on its own branch and worktree, main checkout clean', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const project = await addProject(d, repo);

  const r = await d.tcp('POST', '/api/tasks', { body: { project_id: project.id, name: 'Fix the login bug' } });
  assert.equal(r.status, 201, r.text);
  const task = r.json;
  assert.equal(task.status, 'ready');
  assert.equal(task.name, 'Fix the login bug');
  assert.equal(task.branch, 'grove/fix-the-login-bug');
  assert.equal(task.worktree_path, '.grove/worktrees/fix-the-login-bug/');
  assert.equal(task.project_id, project.id);
  assert.equal(task.base, 'main');
  assert.equal(task.base_commit, git(repo, 'rev-parse', 'main'));
  assert.deepEqual(task.ports, {});
  assert.match(task.created_at, ISO_MS);
  assert.equal(task.archived_at, null);

  assert.ok(gitSucceeds(repo, 'check-ref-format', '--branch', task.branch));
  const wt = path.join(repo, task.worktree_path);
  assert.equal(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD'), task.branch);
  assert.equal(git(wt, 'rev-parse', '--show-toplevel'), wt.replace(/\/$/, ''));
  assert.deepEqual(worktrees(repo), [repo, wt.replace(/\/$/, '')]);
  assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'the main checkout stays clean');
  // No upstream is configured for the new branch.
  assert.ok(!gitSucceeds(repo, 'rev-parse', '--abbrev-ref', `${task.branch}@{upstream}`));

  // A second task: `/.grove/` is in info/exclude exactly once.
  assert.equal((await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'second' } })).status, 201);
  const exclude = readFileSync(path.join(repo, '.git', 'info', 'exclude'), 'utf8');
  assert.equal(exclude.split('\n').filter((l) => l === '/.grove/').length, 1);

  for (const via of [d.socket, d.tcp]) {
    assert.deepEqual((await via('GET', `/api/tasks/${task.id}`)).json, task);
    const list = await via('GET', `/api/tasks?project_id=${project.id}`);
    assert.deepEqual(list.json.map((x: any) => x.name), ['Fix the login bug', 'second']);
    assert.equal((await via('GET', '/api/tasks')).json.length, 2);
  }
  const setup = await d.socket('GET', `/api/tasks/${task.id}/setup`);
  assert.deepEqual(setup.json, { status: 'ready', commands: [], lines: [] });
});

test('base defaults to the current branch and can be any commit-ish', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const first = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'checkout', '-q', '-b', 'develop');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'on develop');
  git(repo, 'tag', 'v1', first);
  const project = await addProject(d, repo);

  const dflt = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'a' } });
  assert.equal(dflt.json.base, 'develop');
  assert.equal(dflt.json.base_commit, git(repo, 'rev-parse', 'develop'));
  const tagged = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'b', base: 'v1' } });
  assert.equal(tagged.status, 201, tagged.text);
  assert.equal(tagged.json.base, 'v1');
  assert.equal(git(path.join(repo, tagged.json.worktree_path), 'rev-parse', 'HEAD'), first);
  const explicit = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'c', branch: 'feature/x-1', base: 'main' } });
  assert.equal(explicit.status, 201, explicit.text);
  assert.equal(explicit.json.branch, 'feature/x-1');
  assert.equal(explicit.json.worktree_path, '.grove/worktrees/c/');
  assert.deepEqual(branches(repo), ['develop', 'feature/x-1', 'grove/a', 'grove/b', 'main']);
});

test('unknown projects and tasks are 404, malformed ids 400', async (t) => {
  const d = await startDaemon(t);
  const missing = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: missing, name: 'x' } });
  assert.equal(r.status, 404);
  assert.equal(r.json.code, 'NOT_FOUND');
  for (const p of [`/api/tasks/${missing}`, `/api/tasks/${missing}/setup`]) assert.equal((await d.socket('GET', p)).status, 404);
  assert.equal((await d.socket('DELETE', `/api/tasks/${missing}`)).status, 404);
  assert.equal((await d.socket('GET', '/api/tasks/NOPE/setup')).json.code, 'INVALID_ID');
  assert.equal((await d.socket('GET', '/api/tasks?project_id=nope')).json.code, 'VALIDATION_FAILED');
  assert.equal((await d.socket('DELETE', `/api/tasks/${missing}?force=maybe`)).json.code, 'VALIDATION_FAILED');
});
