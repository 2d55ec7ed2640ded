import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { type TestContext } from 'node:test';
import { createWorktree } from '../../../workers/worktree/create.ts';
import { removeWorktree } from '../../../workers/worktree/remove.ts';
import { git, makeRepo, makeTempDir, worktrees } from '../../helpers/git.ts';
import { repoState } from '../../helpers/state.ts';

// A repository with one task worktree made the way grove makes it.
async function withWorktree(t: TestContext, slug = 'task') {
  const repo = makeRepo(t);
  const made = await createWorktree({ repo, slug, taken: [] });
  assert.ok(made.ok, JSON.stringify(made));
  return { repo, made, abs: path.join(repo, made.worktree_path) };
}

test('a clean worktree is removed and its branch kept', async (t) => {
  const { repo, made } = await withWorktree(t);
  const r = await removeWorktree({ repo, worktree_path: made.worktree_path, force: false });
  assert.deepEqual(r, { ok: true, removed: 'worktree' });
  assert.deepEqual(repoState(repo), { branches: ['grove/task', 'main'], worktrees: [], folders: [] });
});

test('uncommitted or untracked work is refused without force, naming the files, and removed with it', async (t) => {
  const { repo, made, abs } = await withWorktree(t);
  writeFileSync(path.join(abs, 'notes.txt'), 'mine\n');
  writeFileSync(path.join(abs, 'README.md'), 'changed\n');
  const r = await removeWorktree({ repo, worktree_path: made.worktree_path, force: false });
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.code, 'WORKTREE_DIRTY');
  assert.match(!r.ok ? r.message : '', /notes\.txt/);
  assert.match(!r.ok ? r.message : '', /README\.md/);
  assert.ok(existsSync(path.join(abs, 'notes.txt')), 'nothing was touched');
  const forced = await removeWorktree({ repo, worktree_path: made.worktree_path, force: true });
  assert.deepEqual(forced, { ok: true, removed: 'worktree' });
  assert.deepEqual(repoState(repo), { branches: ['grove/task', 'main'], worktrees: [], folders: [] });
});

test('a folder replaced by a symlink: the link goes, its target is untouched, the registration pruned', async (t) => {
  const { repo, made, abs } = await withWorktree(t);
  const target = makeTempDir(t);
  writeFileSync(path.join(target, 'precious'), 'keep\n');
  rmSync(abs, { recursive: true, force: true });
  symlinkSync(target, abs.replace(/\/$/, ''));
  const r = await removeWorktree({ repo, worktree_path: made.worktree_path, force: true });
  assert.deepEqual(r, { ok: true, removed: 'link' });
  assert.deepEqual(readdirSync(target), ['precious']);
  assert.deepEqual(repoState(repo), { branches: ['grove/task', 'main'], worktrees: [], folders: [] });
});

test('a linked .grove/worktrees is never followed: nothing behind it is touched', async (t) => {
  const { repo, made } = await withWorktree(t);
  const moved = path.join(makeTempDir(t), 'worktrees');
  renameSync(path.join(repo, '.grove/worktrees'), moved);
  symlinkSync(moved, path.join(repo, '.grove/worktrees'));
  const r = await removeWorktree({ repo, worktree_path: made.worktree_path, force: true });
  assert.deepEqual(r, { ok: true, removed: 'foreign' });
  assert.deepEqual(readdirSync(moved), ['task']);
  assert.ok(existsSync(path.join(moved, 'task', 'README.md')));
});

test('a missing folder is "missing", a plain folder is "foreign" and left alone; both registrations pruned', async (t) => {
  const { repo, made, abs } = await withWorktree(t);
  rmSync(abs, { recursive: true, force: true });
  assert.deepEqual(await removeWorktree({ repo, worktree_path: made.worktree_path, force: false }), { ok: true, removed: 'missing' });
  assert.deepEqual(worktrees(repo), [repo]);

  const other = await createWorktree({ repo, slug: 'plain', taken: [] });
  assert.ok(other.ok);
  const plain = path.join(repo, other.worktree_path);
  rmSync(plain, { recursive: true, force: true });
  mkdirSync(plain);
  writeFileSync(path.join(plain, 'file'), 'not a worktree\n');
  assert.deepEqual(await removeWorktree({ repo, worktree_path: other.worktree_path, force: true }), { ok: true, removed: 'foreign' });
  assert.ok(existsSync(path.join(plain, 'file')), 'a folder grove did not make is not deleted');
  assert.deepEqual(worktrees(repo), [repo]);
});

test('paths outside .grove/worktrees/<slug>/ are refused before anything is touched', async (t) => {
  const { repo, made, abs } = await withWorktree(t);
  for (const p of ['src/', '.grove/', '.grove/worktrees/', '.grove/worktrees/../../x/', '.grove/worktrees/task/sub/', '../x/', '.git/']) {
    const r = await removeWorktree({ repo, worktree_path: p, force: true });
    assert.equal(r.ok, false, p);
    assert.equal(!r.ok && r.code, 'INTERNAL', p);
  }
  assert.ok(existsSync(abs));
  assert.deepEqual(repoState(repo).worktrees, [made.worktree_path]);
});

test('undoing a creation deletes the branch only while it is where the creation put it', async (t) => {
  const { repo, made } = await withWorktree(t, 'undone');
  const undo = { repo, worktree_path: made.worktree_path, force: true, deleteBranch: made.branch, deleteBranchAt: made.base_commit };
  assert.deepEqual(await removeWorktree(undo), { ok: true, removed: 'worktree' });
  assert.deepEqual(repoState(repo), { branches: ['main'], worktrees: [], folders: [] });

  const kept = await createWorktree({ repo, slug: 'worked-on', taken: [] });
  assert.ok(kept.ok);
  git(path.join(repo, kept.worktree_path), 'commit', '-q', '--allow-empty', '-m', 'someone’s work');
  const r = await removeWorktree({ ...undo, worktree_path: kept.worktree_path, deleteBranch: kept.branch, deleteBranchAt: kept.base_commit });
  assert.deepEqual(r, { ok: true, removed: 'worktree' });
  assert.deepEqual(repoState(repo).branches, ['grove/worked-on', 'main'], 'a commit on it is kept');
});

test('a worktree locked with `git worktree lock`: REPO_LOCKED without force, removed with it', async (t) => {
  const { repo, made, abs } = await withWorktree(t);
  git(repo, 'worktree', 'lock', '--reason', 'on a USB disk', abs);
  const r = await removeWorktree({ repo, worktree_path: made.worktree_path, force: false });
  assert.equal(!r.ok && r.code, 'REPO_LOCKED');
  assert.ok(existsSync(abs));
  assert.deepEqual(await removeWorktree({ repo, worktree_path: made.worktree_path, force: true }), { ok: true, removed: 'worktree' });
  assert.deepEqual(repoState(repo), { branches: ['grove/task', 'main'], worktrees: [], folders: [] });
});
