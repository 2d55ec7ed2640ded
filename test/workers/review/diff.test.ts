import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { taskDiff } from '../../../workers/review/diff.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

// A task's worktree with work of every kind: committed on its branch, changed but not
// committed, untracked, binary, ignored; and the daemon's scratch folder.
function taskWithWork(t: test.TestContext) {
  const repo = makeRepo(t, { files: { 'README.md': '# fixture\n', 'src/a.txt': 'a\n', '.gitignore': '*.log\n' } });
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/x', wt);
  writeFileSync(path.join(wt, 'src/a.txt'), 'a\ncommitted\n');
  git(wt, 'commit', '-q', '-am', 'work');
  writeFileSync(path.join(wt, 'README.md'), '# changed, not committed\n');
  mkdirSync(path.join(wt, 'new'));
  writeFileSync(path.join(wt, 'new/untracked.txt'), 'untracked\n');
  writeFileSync(path.join(wt, 'new/blob.bin'), Buffer.from([0, 1, 2, 255, 0, 7]));
  writeFileSync(path.join(wt, 'debug.log'), 'ignored\n');
  return { repo, wt, scratch: path.join(makeTempDir(t), 'scratch') };
}

test("diff: the task's whole work against the merge-base, which git apply takes to give the worktree's files; its index untouched", async (t) => {
  const { repo, wt, scratch } = taskWithWork(t);
  const status = git(wt, 'status', '--porcelain');
  const res = await taskDiff({ worktree: wt, base: 'main', scratch });
  assert.ok(res.ok, JSON.stringify(res));
  assert.equal(res.truncated, false);
  const diff = Buffer.from(res.diff).toString('utf8');
  assert.doesNotMatch(diff, /debug\.log/);

  const clone = path.join(makeTempDir(t), 'clone');
  git(repo, 'worktree', 'add', '-q', '--detach', clone, 'main');
  execFileSync('git', ['-C', clone, 'apply', '--binary', '-'], { input: res.diff });
  for (const file of ['README.md', 'src/a.txt', 'new/untracked.txt', 'new/blob.bin']) {
    assert.ok(readFileSync(path.join(clone, file)).equals(readFileSync(path.join(wt, file))), file);
  }
  assert.equal(git(wt, 'status', '--porcelain'), status, 'untracked files stay untracked');
  assert.deepEqual(readdirSync(scratch), [], 'the private index and objects are gone');
});

test('diff: one file with path, literally; a folder is VALIDATION_FAILED on /query/path', async (t) => {
  const { wt, scratch } = taskWithWork(t);
  const one = await taskDiff({ worktree: wt, base: 'main', path: 'new/untracked.txt', scratch });
  assert.ok(one.ok);
  const text = Buffer.from(one.diff).toString('utf8');
  assert.match(text, /^diff --git a\/new\/untracked\.txt b\/new\/untracked\.txt\n/);
  assert.equal(text.match(/^diff --git/gm)?.length, 1);
  const pattern = await taskDiff({ worktree: wt, base: 'main', path: 'new/*', scratch });
  assert.deepEqual(pattern.ok && Buffer.from(pattern.diff).toString('utf8'), '', 'a pattern is a name, and no file has it');
  for (const folder of ['new', 'src']) {
    assert.deepEqual(await taskDiff({ worktree: wt, base: 'main', path: folder, scratch }), {
      ok: false,
      code: 'VALIDATION_FAILED',
      message: `"${folder}" is a folder: path must name a file`,
      path: '/query/path',
    });
  }
});
