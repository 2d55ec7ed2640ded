import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { rebaseTask } from '../../../workers/review/rebase.ts';
import { git, makeTempDir } from '../../helpers/git.ts';
import { forkedTask } from '../../helpers/review.ts';

test("rebase: the task's branch onto its base's tip, the intent recorded before git runs", async (t) => {
  const { repo, wt, head } = forkedTask(t, 'a.txt', 'b.txt');
  const file = path.join(makeTempDir(t), 'land', 'rebase-x.json');
  const res = await rebaseTask({ worktree: wt, base: 'main', intent: { file, task: 'x', repo } });
  assert.deepEqual(res, { ok: true, head: git(wt, 'rev-parse', 'HEAD') });
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

test('rebase: a base that names a tag or commit rather than a branch, and a detached HEAD, are rebased and recorded as such', async (t) => {
  const { repo, wt, head } = forkedTask(t, 'a.txt', 'b.txt');
  git(repo, 'tag', 'v1', 'main');
  git(wt, 'checkout', '-q', '--detach');
  const file = path.join(makeTempDir(t), 'land', 'rebase-x.json');
  const res = await rebaseTask({ worktree: wt, base: 'v1', intent: { file, task: 'x', repo } });
  assert.deepEqual(res, { ok: true, head: git(wt, 'rev-parse', 'HEAD') });
  assert.equal(git(wt, 'rev-parse', 'HEAD~1'), git(repo, 'rev-parse', 'v1^{commit}'), 'on the tag');
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { kind: 'rebase', task: 'x', repo, worktree: wt, branch: null, head, onto: git(repo, 'rev-parse', 'v1^{commit}') });
  const rebased = git(wt, 'rev-parse', 'HEAD');
  assert.deepEqual(await rebaseTask({ worktree: wt, base: 'main', intent: { file, task: 'x', repo } }), { ok: true, head: rebased }, 'already on the tip of main');
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { kind: 'rebase', task: 'x', repo, worktree: wt, branch: null, head: rebased, onto: git(repo, 'rev-parse', 'main') });
});
