import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { addProject, sharedDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { slowFilter } from '../helpers/filters.ts';
import { consistentState, gone, marker, repoState } from '../helpers/state.ts';
import { within } from '../helpers/within.ts';

// Daemons whose user config bounds setup (creation) or git short, shared by the tests (each its own
// repository). Only the bound a test is about is short: the other steps of a loaded machine pass theirs.
const daemon = sharedDaemon({ config: { setup_timeout_s: 3 } });
const gitBounded = sharedDaemon({ config: { git_timeout_s: 2, setup_timeout_s: 60 } });


test('a creation whose git worktree add hangs in a smudge filter is refused with GIT_TIMEOUT at setup_timeout_s, leaving no branch, worktree, row or intent', { timeout: 120_000 }, async (t) => {
  const d = await daemon();
  const m = marker(t);
  const repo = makeRepo(t, { files: { '.gitattributes': '*.slow filter=slow\n', 'x.slow': 'x\n' } });
  const project = await addProject(d, repo);
  const before = repoState(repo);
  const filter = slowFilter(t, repo, 'smudge', m);
  filter.on();

  const started = Date.now();
  const r = await within(20_000, 'the creation', d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hung' } }));
  t.diagnostic(`answered ${r.status} after ${Date.now() - started} ms`);
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.code, 'GIT_TIMEOUT');
  assert.match(r.json.detail, /^creating the worktree \(git worktree add\) took longer than setup_timeout_s \(3 s\) and was stopped; nothing was made$/);
  await gone(m);
  assert.deepEqual(repoState(repo), before, 'no branch, worktree or folder is left');
  assert.equal(existsSync(path.join(repo, '.git', 'worktrees')) && git(repo, 'worktree', 'list', '--porcelain').includes('.grove'), false);
  const { live, problems } = await consistentState(d, repo, project.id);
  assert.deepEqual(live, [], 'no row');
  assert.deepEqual(problems, []);

  filter.off();
  const again = await within(20_000, 'the next creation', d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hung' } }));
  assert.equal(again.status, 201, again.text);
  assert.equal(again.json.branch, 'grove/hung', 'the name was not taken by the one refused');
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
});

test("an archive whose dirty check, or whose worktree removal, hangs in a clean filter answers GIT_TIMEOUT at git_timeout_s; the task is left as it was", { timeout: 120_000 }, async (t) => {
  const d = await gitBounded();
  for (const grove of [{ teardown: ['echo tearing down'] }, {}]) {
    const m = marker(t);
    const repo = makeRepo(t, { files: { '.gitattributes': '*.slow filter=slow\n', 'x.slow': 'x\n', '.grove.json': JSON.stringify(grove) } });
    const project = await addProject(d, repo);
    const made = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'kept' } });
    assert.equal(made.status, 201, made.text);
    const task = made.json;
    const filter = slowFilter(t, repo, 'clean', m);
    // A changed file of the filter's, of the same size: git status reads it through the filter.
    writeFileSync(path.join(repo, task.worktree_path, 'x.slow'), 'y\n');
    filter.on();

    const r = await within(20_000, 'the archive', d.socket('DELETE', `/api/tasks/${task.id}`));
    assert.equal(r.status, 504, r.text);
    assert.equal(r.json.code, 'GIT_TIMEOUT');
    const what = grove.teardown ? 'checking the worktree for uncommitted work' : 'removing the worktree';
    const then = grove.teardown ? 'nothing was archived' : 'the task is not archived';
    assert.equal(r.json.detail, `${what} took longer than git_timeout_s (2 s) and was stopped; ${then}`);
    await gone(m);
    const now = (await d.socket('GET', `/api/tasks/${task.id}`)).json;
    assert.equal(now.status, 'ready');
    assert.equal(existsSync(path.join(repo, task.worktree_path, 'x.slow')), true, 'the worktree and its work are there');
    assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
    assert.equal(existsSync(path.join(repo, '.git', 'worktrees', path.basename(task.worktree_path), 'index.lock')), false, 'no index.lock is left');

    filter.off();
    const dirty = await within(20_000, 'the next archive', d.socket('DELETE', `/api/tasks/${task.id}`));
    assert.equal(dirty.status, 409, dirty.text);
    assert.equal(dirty.json.code, 'WORKTREE_DIRTY');
    const forced = await within(20_000, 'a forced archive', d.socket('DELETE', `/api/tasks/${task.id}?force=true`));
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.json.status, 'archived');
    assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
  }
});
