import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { readyTask } from '../helpers/sessions.ts';
import { consistentState, processesMatching, repoState } from '../helpers/state.ts';

test('a worktree folder deleted by hand: GET reports it, sessions are refused, DELETE cleans up', async (t) => {
  const { d, repo, project, task } = await readyTask(t);
  rmSync(path.join(repo, task.worktree_path), { recursive: true, force: true });
  const got = (await d.socket('GET', `/api/tasks/${task.id}`)).json;
  assert.equal(got.worktree_missing, true);
  assert.equal(got.status, 'ready');
  const listed = (await d.socket('GET', `/api/tasks?project_id=${project.id}`)).json;
  assert.equal(listed[0].worktree_missing, true);
  // The marker names this task: tests run side by side, and another one's process must not match.
  const marker = `echo:never-${task.id}`;
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: marker } });
  assert.equal(s.status, 409);
  assert.equal(s.json.code, 'TASK_NOT_READY');
  assert.match(s.json.detail, /missing/);
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, [], 'no session row');
  assert.deepEqual(processesMatching(marker), [], 'no process');

  const r = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.status, 'archived');
  assert.equal(r.json.worktree_missing, false);
  assert.deepEqual(repoState(repo), { branches: [task.branch, 'main'].sort(), worktrees: [], folders: [] });
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
});

test('a foreign .git/index.lock does not stop tasks and is left in place', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const lock = path.join(repo, '.git', 'index.lock');
  writeFileSync(lock, '');
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'beside a lock' } });
  assert.equal(r.status, 201, r.text);
  assert.equal((await d.socket('DELETE', `/api/tasks/${r.json.id}`)).status, 200);
  assert.ok(existsSync(lock), 'the lock belongs to someone else');
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
});

test('a foreign ref lock: bounded wait, then 409 REPO_LOCKED naming it, the lock kept, nothing made', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  mkdirSync(path.join(repo, '.git', 'refs', 'heads', 'grove'), { recursive: true });
  const lock = path.join(repo, '.git', 'refs', 'heads', 'grove', 'held.lock');
  writeFileSync(lock, '');
  const t0 = Date.now();
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'held' } });
  const ms = Date.now() - t0;
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.code, 'REPO_LOCKED');
  assert.ok(r.json.detail.includes(lock), r.json.detail);
  assert.ok(ms >= 2500 && ms < 15_000, `waited ${ms} ms`);
  assert.ok(existsSync(lock), 'grove never removes a lock it does not own');
  assert.deepEqual(repoState(repo), { branches: ['main'], worktrees: [], folders: [] });
  assert.deepEqual((await d.socket('GET', '/api/tasks')).json, []);
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
});

test('a foreign lock released during the wait: the creation goes on and succeeds', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  mkdirSync(path.join(repo, '.git', 'refs', 'heads', 'grove'), { recursive: true });
  const lock = path.join(repo, '.git', 'refs', 'heads', 'grove', 'brief.lock');
  writeFileSync(lock, '');
  // Like an editor's git that finishes: gone after a second, well inside grove's wait.
  setTimeout(() => rmSync(lock), 1000);
  const t0 = Date.now();
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'brief' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.branch, 'grove/brief');
  assert.ok(Date.now() - t0 >= 900, 'it waited for the lock');
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
});

test('a worktree locked with `git worktree lock`: 409 REPO_LOCKED without force, archived with force', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'pinned' } })).json;
  git(repo, 'worktree', 'lock', '--reason', 'on a USB disk', path.join(repo, task.worktree_path));
  const r = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.code, 'REPO_LOCKED');
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.status, 'ready', 'nothing changed');
  assert.ok(existsSync(path.join(repo, task.worktree_path)));
  const f = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(f.status, 200, f.text);
  assert.deepEqual(repoState(repo), { branches: ['grove/pinned', 'main'], worktrees: [], folders: [] });
});
