import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { taskChanges } from '../../../workers/review/changes.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

test("changes: every file the task changed since the merge-base, committed or not, with its status and line counts; ahead and behind its base", async (t) => {
  const long = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join('');
  const repo = makeRepo(t, { files: { 'README.md': '# fixture\n', 'old-name.txt': long, 'gone.txt': 'x\ny\n', '.gitignore': '*.log\n' } });
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/x', wt);
  // Committed on the task's branch: a rename and a deletion.
  renameSync(path.join(wt, 'old-name.txt'), path.join(wt, 'new-name.txt'));
  rmSync(path.join(wt, 'gone.txt'));
  git(wt, 'add', '-A');
  git(wt, 'commit', '-q', '-m', 'work');
  // Not committed: a change, a new binary file, an untracked one, an ignored one.
  writeFileSync(path.join(wt, 'README.md'), '# fixture\nmore\nand more\n');
  writeFileSync(path.join(wt, 'blob.bin'), Buffer.from([0, 1, 2, 255]));
  writeFileSync(path.join(wt, 'debug.log'), 'ignored\n');
  // The base moved on twice meanwhile.
  for (const n of [1, 2]) git(repo, 'commit', '-q', '--allow-empty', '-m', `main ${n}`);
  const mergeBase = git(repo, 'merge-base', 'main', 'grove/x');
  const status = git(wt, 'status', '--porcelain');

  const scratch = path.join(makeTempDir(t), 'scratch');
  const res = await taskChanges({ worktree: wt, base: 'main', scratch });
  assert.ok(res.ok, JSON.stringify(res));
  assert.deepEqual(
    { ...res, files: [...res.files].sort((a, b) => (a.path < b.path ? -1 : 1)) },
    {
      ok: true,
      base: 'main',
      merge_base: mergeBase,
      head: git(wt, 'rev-parse', 'HEAD'),
      ahead: 1,
      behind: 2,
      uncommitted: 2,
      files: [
        { path: 'README.md', status: 'modified', additions: 2, deletions: 0, binary: false },
        { path: 'blob.bin', status: 'untracked', additions: 0, deletions: 0, binary: true },
        { path: 'gone.txt', status: 'deleted', additions: 0, deletions: 2, binary: false },
        { path: 'new-name.txt', old_path: 'old-name.txt', status: 'renamed', additions: 0, deletions: 0, binary: false },
      ],
    },
  );
  assert.equal(git(wt, 'status', '--porcelain'), status, 'only read: the worktree is as it was');
});
