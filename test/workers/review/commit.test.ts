import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { commitTask } from '../../../workers/review/commit.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

// A task's worktree on its own branch, and the daemon's scratch folder.
function worktree(t: test.TestContext) {
  const repo = makeRepo(t, { files: { 'README.md': '# fixture\n', '.gitignore': '*.log\n' } });
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/x', wt);
  return { repo, wt, scratch: path.join(makeTempDir(t), 'scratch') };
}

test('commit: everything uncommitted, untracked files included and ignored ones not, as one commit with the message as given', async (t) => {
  const { wt, scratch } = worktree(t);
  assert.deepEqual(await commitTask({ worktree: wt, message: 'nothing', scratch }), { ok: false, code: 'NOTHING_TO_COMMIT', message: 'the worktree has no uncommitted changes' });
  writeFileSync(path.join(wt, 'README.md'), '# changed\n');
  writeFileSync(path.join(wt, 'new.txt'), 'new\n');
  writeFileSync(path.join(wt, 'debug.log'), 'ignored\n');
  const message = 'Fix login\n\n# not a comment: kept verbatim\n';
  const res = await commitTask({ worktree: wt, message, scratch });
  assert.deepEqual(res, { ok: true, commit: git(wt, 'rev-parse', 'HEAD'), files: ['README.md', 'new.txt'] });
  assert.equal(git(wt, 'log', '-1', '--format=%B'), message.trimEnd());
  assert.equal(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD'), 'grove/x');
  assert.equal(git(wt, 'status', '--porcelain', '--ignored'), '!! debug.log');
  assert.deepEqual(readdirSync(scratch), [], "the index's backup is gone");
});

test("commit: a hook that refuses is COMMIT_FAILED with git's reason, and the index is put back as it was", async (t) => {
  const { repo, wt, scratch } = worktree(t);
  writeFileSync(path.join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho "lint failed: new.txt" >&2\nexit 1\n', { mode: 0o755 });
  writeFileSync(path.join(wt, 'staged.txt'), 'staged\n');
  git(wt, 'add', 'staged.txt');
  writeFileSync(path.join(wt, 'new.txt'), 'new\n');
  const before = git(wt, 'status', '--porcelain');
  const head = git(wt, 'rev-parse', 'HEAD');
  assert.deepEqual(await commitTask({ worktree: wt, message: 'x', scratch }), { ok: false, code: 'COMMIT_FAILED', message: 'git refused the commit: lint failed: new.txt' });
  assert.equal(git(wt, 'status', '--porcelain'), before, 'staged stays staged, untracked stays untracked');
  assert.equal(git(wt, 'rev-parse', 'HEAD'), head);
  assert.deepEqual(readdirSync(scratch), []);
});
