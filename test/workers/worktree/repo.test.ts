import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { firstLine, isWorktreeRoot, repoInfo, resolveBase } from '../../../workers/worktree/repo.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

test("repo info: the common git dir, HEAD's commit and branch in one call; no commit yet is no head; not a repository is git's reason", async (t) => {
  const repo = makeRepo(t);
  assert.deepEqual(await repoInfo(repo), { commonDir: path.join(repo, '.git'), head: { commit: git(repo, 'rev-parse', 'HEAD'), ref: 'main' } });
  git(repo, 'checkout', '-q', '--detach');
  assert.deepEqual(await repoInfo(repo), { commonDir: path.join(repo, '.git'), head: { commit: git(repo, 'rev-parse', 'HEAD'), ref: 'HEAD' } }, 'detached');

  const empty = makeTempDir(t);
  git(empty, 'init', '-q', '-b', 'main');
  assert.deepEqual(await repoInfo(empty), { commonDir: path.join(empty, '.git'), head: null });

  const plain = makeTempDir(t);
  assert.match((await repoInfo(plain)) as string, /^not a git repository/);
  assert.equal(firstLine('\nfatal: bad thing\nmore'), 'bad thing');
  assert.equal(firstLine('error: x'), 'x');
});

test('resolve base: a name of exactly one commit, else BASE_NOT_FOUND on /base', async (t) => {
  const repo = makeRepo(t);
  const head = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'tag', 'v1');
  assert.deepEqual(await resolveBase(repo, 'main'), { ok: true, base: 'main', base_commit: head });
  assert.deepEqual(await resolveBase(repo, 'v1'), { ok: true, base: 'v1', base_commit: head }, 'a tag names its commit');
  assert.deepEqual(await resolveBase(repo, head.slice(0, 10)), { ok: true, base: head.slice(0, 10), base_commit: head });
  for (const given of ['nope', '--all', 'main:README.md', 'HEAD~5']) {
    assert.deepEqual(await resolveBase(repo, given), { ok: false, code: 'BASE_NOT_FOUND', message: `${JSON.stringify(given)} is not a commit in ${repo}`, path: '/base' }, given);
  }
});

test('worktree root: the top of a work tree is, a folder inside one or outside any is not', async (t) => {
  const repo = makeRepo(t);
  const worktree = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', worktree);
  mkdirSync(path.join(repo, 'sub'));
  assert.equal(await isWorktreeRoot(repo), true);
  assert.equal(await isWorktreeRoot(worktree), true);
  assert.equal(await isWorktreeRoot(path.join(repo, 'sub')), false);
  assert.equal(await isWorktreeRoot(makeTempDir(t)), false);
  assert.equal(await isWorktreeRoot(path.join(repo, 'missing')), false);
});
