import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { copyIncluded, type CopyReport } from '../../../workers/worktree/copy.ts';
import { MAX_CONFIG_BYTES } from '../../../schemas/project-config.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

// A repository whose `.gitignore` ignores what the test puts there, and a worktree of `branch`.
function repoAndWorktree(t: test.TestContext, branch = 'main') {
  const repo = makeRepo(t, { files: { '.gitignore': '*.env\nbig/\nmany/\n.worktreeinclude\n', 'README.md': 'tracked\n' } });
  const wt = path.join(repo, '.grove', 'worktrees', 'w');
  return { repo, wt, add: () => git(repo, 'worktree', 'add', '-q', '-b', 'task', wt, branch) };
}

async function copy(repo: string, wt: string, patterns: string[], opts: { timeoutMs?: number; maxBytes?: number } = {}): Promise<CopyReport> {
  const r = await copyIncluded({ repo, worktree: wt, patterns, timeoutMs: opts.timeoutMs ?? 60_000, ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}) });
  assert.ok(r.ok);
  return r;
}

test('copy: a tracked symlink of the base branch that leads out of the worktree is never written through; a link inside it is', async (t) => {
  const outside = makeTempDir(t);
  const { repo, wt, add } = repoAndWorktree(t, 'linked');
  // `main` has sub/ and inside/ as folders; the branch `linked` has them as links: one out of
  // the project, one to a folder of the worktree.
  git(repo, 'checkout', '-q', '-b', 'linked');
  mkdirSync(path.join(repo, 'real', 'x'), { recursive: true });
  writeFileSync(path.join(repo, 'real', 'x', 'keep'), 'tracked\n');
  symlinkSync(outside, path.join(repo, 'sub'));
  symlinkSync('real', path.join(repo, 'inside'));
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'links');
  git(repo, 'checkout', '-q', 'main');
  add();
  for (const dir of ['sub/x', 'inside/x']) {
    mkdirSync(path.join(repo, dir), { recursive: true });
    writeFileSync(path.join(repo, dir, 'y.env'), 'A=1\n');
  }

  const r = await copy(repo, wt, ['*.env']);
  assert.deepEqual(readdirSync(outside), [], 'nothing was made outside the worktree');
  assert.deepEqual(r.skipped, [{ path: 'sub/x/y.env', why: 'its folder sub in the worktree is a link out of it: not followed' }]);
  assert.deepEqual(r.copied_paths, ['inside/x/y.env']);
  assert.equal(readFileSync(path.join(wt, 'real', 'x', 'y.env'), 'utf8'), 'A=1\n', 'copied through the link that stays inside');
});

test('copy: a sparse file is not copied (its holes would be written out), with the reason', async (t) => {
  const { repo, wt, add } = repoAndWorktree(t);
  add();
  mkdirSync(path.join(repo, 'big'));
  writeFileSync(path.join(repo, 'big', 'disk.img'), '');
  truncateSync(path.join(repo, 'big', 'disk.img'), 5 * 1024 ** 3);
  writeFileSync(path.join(repo, 'big', 'small.env'), 'B=2\n');
  const r = await copy(repo, wt, ['big/']);
  assert.deepEqual(r.copied_paths, ['big/small.env']);
  assert.equal(r.skipped.length, 1);
  assert.equal(r.skipped[0]!.path, 'big/disk.img');
  assert.match(r.skipped[0]!.why, /^a sparse file of 5368709120 bytes \(0 on disk\)/);
  assert.equal(existsSync(path.join(wt, 'big', 'disk.img')), false);
});

test('copy: bounded in bytes (a file that would pass the bound is not copied, smaller ones are) and in time (it stops, the rest counted)', async (t) => {
  const { repo, wt, add } = repoAndWorktree(t);
  add();
  mkdirSync(path.join(repo, 'big'));
  for (const [name, size] of [['a.bin', 600], ['b.bin', 600], ['c.bin', 300]] as const) writeFileSync(path.join(repo, 'big', name), 'x'.repeat(size));
  const r = await copy(repo, wt, ['big/'], { maxBytes: 1000 });
  assert.deepEqual([r.copied_paths, r.bytes], [['big/a.bin', 'big/c.bin'], 900]);
  assert.deepEqual(r.skipped, [{ path: 'big/b.bin', why: '600 bytes: it would take the copy past its bound of 1000 bytes in all' }]);
  assert.equal(r.stopped, null);

  rmSync(path.join(wt, 'big'), { recursive: true });
  const late = await copy(repo, wt, ['big/'], { timeoutMs: 0 });
  assert.equal(late.copied, 0);
  assert.equal(late.not_copied, 3);
  assert.match(late.stopped ?? '', /ran out of its time .*; 3 matching files not copied/);
  assert.equal(existsSync(path.join(wt, 'big')), false);
});

test('copy: a .worktreeinclude over the size limit of .grove.json is not read (a 240 MiB sparse one); the patterns of copy still apply', async (t) => {
  const { repo, wt, add } = repoAndWorktree(t);
  add();
  writeFileSync(path.join(repo, '.env'), 'C=3\n');
  writeFileSync(path.join(repo, '.worktreeinclude'), '');
  truncateSync(path.join(repo, '.worktreeinclude'), 240 * 1024 * 1024);
  const r = await copy(repo, wt, ['.env']);
  assert.deepEqual(r.copied_paths, ['.env']);
  assert.deepEqual(r.skipped, [{ path: '.worktreeinclude', why: `it is larger than ${MAX_CONFIG_BYTES} bytes, the limit of .grove.json: its patterns are not used` }]);
  // One at the limit is read.
  writeFileSync(path.join(repo, '.worktreeinclude'), `*.env\n${'#'.repeat(MAX_CONFIG_BYTES - 7)}\n`);
  assert.equal(statSync(path.join(repo, '.worktreeinclude')).size, MAX_CONFIG_BYTES);
  writeFileSync(path.join(repo, 'd.env'), 'D=4\n');
  rmSync(path.join(wt, '.env'));
  assert.deepEqual((await copy(repo, wt, [])).copied_paths, ['.env', 'd.env']);
});
