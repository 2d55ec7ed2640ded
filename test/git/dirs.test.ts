import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { gitDirsOf } from '../../daemon/git/dirs.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';

// git's own answer, the one gitDirsOf must give without running it.
function asGitSays(dir: string) {
  const [gitDir, commonDir, top] = git(dir, 'rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel').split('\n') as [string, string, string];
  return { top: realpathSync(top), gitDir: realpathSync(gitDir), commonDir: realpathSync(commonDir) };
}

test("a main checkout, a linked worktree, a subfolder and a separate git dir: the folders git itself names", (t) => {
  const repo = makeRepo(t, { files: { 'src/deep/a.txt': 'a\n' } });
  const wt = path.join(makeTempDir(t), 'linked');
  git(repo, 'worktree', 'add', '-q', '-b', 'linked', wt);
  const elsewhere = makeTempDir(t);
  const separate = path.join(elsewhere, 'checkout');
  git(elsewhere, 'init', '-q', '--separate-git-dir', path.join(elsewhere, 'data.git'), separate);
  writeFileSync(path.join(separate, 'f'), 'f\n');
  for (const dir of [repo, path.join(repo, 'src', 'deep'), wt, path.join(wt, 'src'), separate]) {
    assert.deepEqual(gitDirsOf(dir), asGitSays(dir), dir);
  }
  const linked = gitDirsOf(wt)!;
  assert.equal(linked.commonDir, path.join(repo, '.git'));
  assert.equal(linked.gitDir, path.join(repo, '.git', 'worktrees', 'linked'));
});

test('links are resolved: a checkout reached through a symlink names the real folders', (t) => {
  const repo = makeRepo(t);
  const link = path.join(makeTempDir(t), 'via-link');
  symlinkSync(repo, link);
  assert.deepEqual(gitDirsOf(link), { top: repo, gitDir: path.join(repo, '.git'), commonDir: path.join(repo, '.git') });
});

test('no checkout, a `.git` that is not a git dir, a gitdir file naming nothing: null, as git refuses them', (t) => {
  const plain = makeTempDir(t);
  assert.equal(gitDirsOf(plain), null);
  const emptyDotGit = makeTempDir(t);
  mkdirSync(path.join(emptyDotGit, '.git'));
  assert.equal(gitDirsOf(emptyDotGit), null);
  const badFile = makeTempDir(t);
  writeFileSync(path.join(badFile, '.git'), 'gitdir: ./nowhere\n');
  assert.equal(gitDirsOf(badFile), null);
  const notAGitdirLine = makeTempDir(t);
  writeFileSync(path.join(notAGitdirLine, '.git'), 'hello\n');
  assert.equal(gitDirsOf(notAGitdirLine), null);
});
