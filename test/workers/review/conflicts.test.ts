import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { projectConflicts } from '../../../workers/review/conflicts.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

test('conflicts: each pair of tasks and each task against its base, uncommitted work included; only read', async (t) => {
  const repo = makeRepo(t, { files: { 'shared.txt': 'one\n', 'base.txt': 'base\n', 'free.txt': 'free\n' } });
  const root = makeTempDir(t);
  const task = (id: string) => {
    const wt = path.join(root, id);
    git(repo, 'worktree', 'add', '-q', '-b', `grove/${id}`, wt);
    return { id, worktree: wt, base: 'main' };
  };
  const [a, b, c, d] = [task('a'), task('b'), task('c'), task('d')];
  // a committed and b did not, on the same line: they conflict with each other.
  writeFileSync(path.join(a.worktree, 'shared.txt'), 'one from a\n');
  git(a.worktree, 'commit', '-q', '-am', 'a');
  writeFileSync(path.join(b.worktree, 'shared.txt'), 'one from b\n');
  // c changed what the base changed since: c conflicts with its base.
  writeFileSync(path.join(c.worktree, 'base.txt'), 'base from c\n');
  git(c.worktree, 'commit', '-q', '-am', 'c');
  writeFileSync(path.join(repo, 'base.txt'), 'base moved on\n');
  git(repo, 'commit', '-q', '-am', 'main moves');
  // d only adds a file nobody else touches.
  writeFileSync(path.join(d.worktree, 'd-only.txt'), 'd\n');

  const refs = git(repo, 'for-each-ref');
  const statuses = [a, b, c, d].map((x) => git(x.worktree, 'status', '--porcelain'));
  const scratch = path.join(makeTempDir(t), 'scratch');
  const res = await projectConflicts({ repo, tasks: [a, b, c, d], scratch });
  assert.ok(res.ok, JSON.stringify(res));
  assert.deepEqual(res.conflicts, [
    { task_id: 'c', with: 'base', files: ['base.txt'] },
    { task_id: 'a', with: 'b', files: ['shared.txt'] },
  ]);
  assert.equal(git(repo, 'for-each-ref'), refs, 'no ref made or moved');
  assert.deepEqual([a, b, c, d].map((x) => git(x.worktree, 'status', '--porcelain')), statuses, 'no worktree or index changed');
  assert.deepEqual(readdirSync(scratch), [], "the read's objects are gone with its scratch");
  assert.deepEqual(await projectConflicts({ repo, tasks: [], scratch }), { ok: true, conflicts: [] });
});
