import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import type { MergeStrategy } from '../../../schemas/review.ts';
import { mergeTask } from '../../../workers/review/merge.ts';
import { git } from '../../helpers/git.ts';
import { forkedTask } from '../../helpers/review.ts';

// The fixture, with the input that lands its task on main.
function landing(t: test.TestContext, file: string, baseFile: string | null) {
  const fork = forkedTask(t, file, baseFile);
  const input = (strategy: MergeStrategy) => ({ repo: fork.repo, worktree: fork.wt, base: 'main', branch: 'grove/x', strategy, title: 'Fix login' });
  return { ...fork, input, tip: fork.head };
}

test("merge: a merge commit, a squash or a fast-forward lands on the base and moves its checkout's files with it", async (t) => {
  const merged = landing(t, 'a.txt', 'b.txt');
  const m = await mergeTask(merged.input('merge'));
  assert.deepEqual(m, { ok: true, base: 'main', commit: git(merged.repo, 'rev-parse', 'main'), strategy: 'merge' });
  assert.equal(git(merged.repo, 'log', '-1', '--format=%P %s', 'main'), `${merged.old} ${merged.tip} Merge branch 'grove/x' into main`);
  assert.equal(readFileSync(path.join(merged.repo, 'a.txt'), 'utf8'), 'from the task\n', 'the checkout moved with main');
  assert.equal(git(merged.repo, 'status', '--porcelain'), '');
  assert.deepEqual(await mergeTask(merged.input('merge')), { ok: true, base: 'main', commit: git(merged.repo, 'rev-parse', 'main'), strategy: 'merge' }, 'already in: nothing to do');

  const squashed = landing(t, 'a.txt', 'b.txt');
  const s = await mergeTask(squashed.input('squash'));
  assert.ok(s.ok);
  assert.equal(git(squashed.repo, 'log', '-1', '--format=%P', 'main'), squashed.old, 'one parent: the old base');
  assert.equal(git(squashed.repo, 'log', '-1', '--format=%B', 'main'), 'Fix login\n\nSquashed from grove/x:\n* task work');

  const ff = landing(t, 'a.txt', null);
  assert.deepEqual(await mergeTask(ff.input('ff')), { ok: true, base: 'main', commit: ff.tip, strategy: 'ff' });
  assert.equal(git(ff.repo, 'rev-parse', 'main'), ff.tip);
});

test('merge: a conflict, a moved base for ff, a dirty worktree or base checkout change nothing', async (t) => {
  const clash = landing(t, 'a.txt', 'a.txt');
  assert.deepEqual(await mergeTask(clash.input('merge')), {
    ok: false,
    code: 'CONFLICT',
    message: "the task's branch conflicts with its base in a.txt; nothing was changed",
    files: ['a.txt'],
  });
  assert.equal((await mergeTask(clash.input('ff'))).ok, false);
  assert.equal(git(clash.repo, 'rev-parse', 'main'), clash.old);

  const dirty = landing(t, 'a.txt', 'b.txt');
  writeFileSync(path.join(dirty.wt, 'new.txt'), 'x\n');
  assert.equal(await mergeTask(dirty.input('merge')).then((r) => !r.ok && r.code), 'WORKTREE_DIRTY');

  const busy = landing(t, 'a.txt', 'b.txt');
  writeFileSync(path.join(busy.repo, 'b.txt'), 'being edited\n');
  const refused = await mergeTask(busy.input('merge'));
  assert.equal(!refused.ok && refused.code, 'BASE_CHECKOUT_DIRTY');
  assert.equal(git(busy.repo, 'rev-parse', 'main'), busy.old);
  assert.equal(readFileSync(path.join(busy.repo, 'b.txt'), 'utf8'), 'being edited\n', "the user's edit is kept");
  assert.equal(await mergeTask({ ...busy.input('merge'), base: 'nope' }).then((r) => !r.ok && r.code), 'BASE_NOT_FOUND');
  git(busy.repo, 'checkout', '-q', '--', 'b.txt');
  const gone = await mergeTask({ ...busy.input('merge'), branch: 'grove/gone' });
  assert.equal(!gone.ok && gone.code, 'INTERNAL', 'the task branch is gone');
  assert.equal(git(busy.repo, 'rev-parse', 'main'), busy.old);
});
