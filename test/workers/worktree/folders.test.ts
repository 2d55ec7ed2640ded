import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { ensureExcluded, ensureWorktreesDir, groveWorktreePath, WORKTREES_DIR, worktreesDirLinked } from '../../../workers/worktree/folders.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

test('worktree folders: .grove/worktrees/ is made as real folders; a symlink or a file on the way is refused', (t) => {
  const repo = makeTempDir(t);
  assert.equal(ensureWorktreesDir(repo), null);
  assert.ok(statSync(path.join(repo, WORKTREES_DIR)).isDirectory());
  assert.equal(ensureWorktreesDir(repo), null, 'again: already there');
  assert.equal(worktreesDirLinked(repo), false);

  const elsewhere = makeTempDir(t);
  const linked = makeTempDir(t);
  symlinkSync(elsewhere, path.join(linked, '.grove'));
  assert.equal(worktreesDirLinked(linked), true);
  assert.equal(ensureWorktreesDir(linked), `${path.join(linked, '.grove')} exists and is not a folder (a symlink or a file); grove will not use it`);

  const inner = makeTempDir(t);
  mkdirSync(path.join(inner, '.grove'));
  symlinkSync(elsewhere, path.join(inner, WORKTREES_DIR));
  assert.equal(worktreesDirLinked(inner), true);
  assert.match(ensureWorktreesDir(inner) ?? '', /\.grove\/worktrees exists and is not a folder/);

  const file = makeTempDir(t);
  writeFileSync(path.join(file, '.grove'), 'x');
  assert.match(ensureWorktreesDir(file) ?? '', /\.grove exists and is not a folder/);
});

test("worktree folders: /.grove/ is excluded once in the repository's info/exclude, keeping the main checkout clean", (t) => {
  const repo = makeRepo(t);
  const common = path.join(repo, '.git');
  writeFileSync(path.join(common, 'info', 'exclude'), '# mine\n*.log');
  ensureExcluded(common);
  ensureExcluded(common);
  assert.equal(readFileSync(path.join(common, 'info', 'exclude'), 'utf8'), '# mine\n*.log\n/.grove/\n');
  ensureWorktreesDir(repo);
  writeFileSync(path.join(repo, WORKTREES_DIR, 'stray'), 'x');
  assert.equal(git(repo, 'status', '--porcelain'), '');
});

test('worktree folders: only a path of the form .grove/worktrees/<name>/ names a worktree grove made', () => {
  assert.equal(groveWorktreePath('.grove/worktrees/fix-login/'), '.grove/worktrees/fix-login');
  assert.equal(groveWorktreePath('.grove/worktrees/fix-login'), '.grove/worktrees/fix-login');
  for (const p of ['', '.grove/worktrees/', '.grove/worktrees/a/b/', '.grove/worktrees/../x/', '.grove/worktrees/..', 'src/', '/tmp/x/', '../.grove/worktrees/a/', '.grove/other/a/']) {
    assert.equal(groveWorktreePath(p), null, JSON.stringify(p));
  }
});
