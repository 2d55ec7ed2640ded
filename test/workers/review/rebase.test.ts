import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { rebaseTask } from '../../../workers/review/rebase.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';
import { forkedTask } from '../../helpers/review.ts';

test("rebase: the task's branch onto its base's tip, the intent recorded before git runs", async (t) => {
  const { repo, wt, head } = forkedTask(t, 'a.txt', 'b.txt');
  const file = path.join(makeTempDir(t), 'land', 'rebase-x.json');
  const res = await rebaseTask({ worktree: wt, base: 'main', intent: { file, task: 'x', repo } });
  assert.deepEqual(res, { ok: true, head: git(wt, 'rev-parse', 'HEAD'), onto: git(repo, 'rev-parse', 'main') });
  assert.equal(git(wt, 'rev-parse', 'HEAD~1'), git(repo, 'rev-parse', 'main'), 'on the tip');
  assert.equal(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD'), 'grove/x');
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { kind: 'rebase', task: 'x', repo, worktree: wt, branch: 'refs/heads/grove/x', head, onto: git(repo, 'rev-parse', 'main') });
});

test('rebase: uncommitted work is WORKTREE_DIRTY; a conflict is aborted, named, and leaves the branch as it was', async (t) => {
  const dirty = forkedTask(t, 'a.txt', 'b.txt');
  writeFileSync(path.join(dirty.wt, 'new.txt'), 'x\n');
  const refused = await rebaseTask({ worktree: dirty.wt, base: 'main' });
  assert.deepEqual(refused, { ok: false, code: 'WORKTREE_DIRTY', message: 'the worktree has uncommitted or untracked changes (new.txt); commit them first' });

  const clash = forkedTask(t, 'a.txt', 'a.txt');
  const res = await rebaseTask({ worktree: clash.wt, base: 'main' });
  assert.deepEqual(res, { ok: false, code: 'CONFLICT', message: 'rebasing onto main conflicts in a.txt; the rebase was aborted and the branch is as it was', files: ['a.txt'] });
  assert.equal(git(clash.wt, 'rev-parse', 'HEAD'), clash.head);
  assert.equal(git(clash.wt, 'rev-parse', '--abbrev-ref', 'HEAD'), 'grove/x');
  assert.equal(git(clash.wt, 'status', '--porcelain'), '');
  assert.equal(existsSync(git(clash.wt, 'rev-parse', '--path-format=absolute', '--git-path', 'rebase-merge')), false, 'no rebase left in progress');
  assert.deepEqual(await rebaseTask({ worktree: clash.wt, base: 'nope' }).then((r) => !r.ok && r.code), 'BASE_NOT_FOUND');
});

test('rebase with upstream (a restack): only the commits past upstream are replayed, so a squashed parent is not replayed', async (t) => {
  const repo = makeRepo(t, { files: { 'a.txt': 'a\n' } });
  // The parent: two commits on x.txt, landed on main as one squashed commit.
  git(repo, 'checkout', '-q', '-b', 'parent');
  for (const text of ['1\n', '2\n']) {
    writeFileSync(path.join(repo, 'x.txt'), text);
    git(repo, 'add', 'x.txt');
    git(repo, 'commit', '-qm', `x ${text.trim()}`);
  }
  git(repo, 'checkout', '-q', 'main');
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/stacked', wt, 'parent');
  writeFileSync(path.join(wt, 's.txt'), 's\n');
  git(wt, 'add', 's.txt');
  git(wt, 'commit', '-qm', 'stacked work');
  git(repo, 'merge', '-q', '--squash', 'parent');
  git(repo, 'commit', '-qm', 'parent squashed');

  // Without upstream the parent's first commit is replayed onto its squash, and conflicts.
  const plain = await rebaseTask({ worktree: wt, base: 'main' });
  assert.equal(!plain.ok && plain.code, 'CONFLICT');
  const res = await rebaseTask({ worktree: wt, base: 'main', upstream: 'parent' });
  assert.ok(res.ok, JSON.stringify(res));
  assert.equal(git(wt, 'rev-parse', 'HEAD~1'), git(repo, 'rev-parse', 'main'));
  assert.equal(git(wt, 'log', '--format=%s', 'main..HEAD'), 'stacked work');
  assert.equal(git(wt, 'show', 'HEAD:x.txt'), '2');
});

test('rebase: a base that names a tag or commit rather than a branch, and a detached HEAD, are rebased and recorded as such', async (t) => {
  const { repo, wt, head } = forkedTask(t, 'a.txt', 'b.txt');
  git(repo, 'tag', 'v1', 'main');
  git(wt, 'checkout', '-q', '--detach');
  const file = path.join(makeTempDir(t), 'land', 'rebase-x.json');
  const res = await rebaseTask({ worktree: wt, base: 'v1', intent: { file, task: 'x', repo } });
  assert.deepEqual(res, { ok: true, head: git(wt, 'rev-parse', 'HEAD'), onto: git(repo, 'rev-parse', 'v1^{commit}') });
  assert.equal(git(wt, 'rev-parse', 'HEAD~1'), git(repo, 'rev-parse', 'v1^{commit}'), 'on the tag');
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { kind: 'rebase', task: 'x', repo, worktree: wt, branch: null, head, onto: git(repo, 'rev-parse', 'v1^{commit}') });
  const rebased = git(wt, 'rev-parse', 'HEAD');
  assert.deepEqual(await rebaseTask({ worktree: wt, base: 'main', intent: { file, task: 'x', repo } }), { ok: true, head: rebased, onto: git(repo, 'rev-parse', 'main') }, 'already on the tip of main');
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { kind: 'rebase', task: 'x', repo, worktree: wt, branch: null, head: rebased, onto: git(repo, 'rev-parse', 'main') });
});
