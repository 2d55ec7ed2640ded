import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { createWorktree } from '../../../workers/worktree/create.ts';
import { LOCK_WAIT_MS } from '../../../workers/worktree/locks.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';
import { gone, marker, repoState } from '../../helpers/state.ts';

test('makes grove/<slug> from the current branch in .grove/worktrees/<slug>/, excluded from the main checkout', async (t) => {
  const repo = makeRepo(t);
  const head = git(repo, 'rev-parse', 'HEAD');
  const r = await createWorktree({ repo, slug: 'fix-login', taken: [] });
  assert.deepEqual(r, { ok: true, branch: 'grove/fix-login', worktree_path: '.grove/worktrees/fix-login/', base: 'main', base_commit: head });
  assert.deepEqual(repoState(repo), { branches: ['grove/fix-login', 'main'], worktrees: ['.grove/worktrees/fix-login/'], folders: ['fix-login'] });
  const wt = path.join(repo, '.grove/worktrees/fix-login');
  assert.equal(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD'), 'grove/fix-login');
  assert.equal(git(wt, 'rev-parse', 'HEAD'), head);
  assert.equal(git(repo, 'status', '--porcelain'), '', 'the main checkout stays clean');
  // A second creation does not add the exclude line again.
  await createWorktree({ repo, slug: 'other', taken: [] });
  const exclude = readFileSync(path.join(repo, '.git/info/exclude'), 'utf8');
  assert.equal(exclude.split('\n').filter((l) => l === '/.grove/').length, 1);
});

test('an explicit base and branch are used as given', async (t) => {
  const repo = makeRepo(t);
  const first = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'second');
  git(repo, 'tag', 'v1', first);
  const r = await createWorktree({ repo, slug: 'x', branch: 'feature/login', base: 'v1', taken: [] });
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.branch, 'feature/login');
  assert.equal(r.worktree_path, '.grove/worktrees/x/');
  assert.equal(r.base, 'v1');
  assert.equal(r.base_commit, first);
  assert.equal(git(repo, 'rev-parse', 'refs/heads/feature/login'), first);
});

test('collisions take -2, -3…: a taken path, a folder on disk, an existing branch, a D/F clash', async (t) => {
  const repo = makeRepo(t);
  git(repo, 'branch', 'grove/a');
  const byBranch = await createWorktree({ repo, slug: 'a', taken: [] });
  assert.ok(byBranch.ok);
  assert.equal(byBranch.branch, 'grove/a-2');
  const byTaken = await createWorktree({ repo, slug: 'b', taken: ['.grove/worktrees/b/'] });
  assert.ok(byTaken.ok);
  assert.equal(byTaken.worktree_path, '.grove/worktrees/b-2/');
  mkdirSync(path.join(repo, '.grove/worktrees/c'));
  const byFolder = await createWorktree({ repo, slug: 'c', taken: [] });
  assert.ok(byFolder.ok);
  assert.equal(byFolder.worktree_path, '.grove/worktrees/c-2/');
  git(repo, 'branch', 'grove/d/deeper');
  const byDirFile = await createWorktree({ repo, slug: 'd', taken: [] });
  assert.ok(byDirFile.ok);
  assert.equal(byDirFile.branch, 'grove/d-2');
  const third = await createWorktree({ repo, slug: 'a', taken: [] });
  assert.ok(third.ok);
  assert.equal(third.branch, 'grove/a-3');
  const long = await createWorktree({ repo, slug: 'l'.repeat(48), taken: [`.grove/worktrees/${'l'.repeat(48)}/`] });
  assert.ok(long.ok);
  assert.equal(long.branch, `grove/${'l'.repeat(46)}-2`, 'the suffix stays within 48 characters');
});

test('refusals create nothing: invalid or taken branch, unknown base, no commit, a linked .grove', async (t) => {
  const repo = makeRepo(t);
  git(repo, 'branch', 'feat');
  const cases: Array<[Record<string, string>, string, string | undefined]> = [
    [{ branch: '-x' }, 'VALIDATION_FAILED', '/branch'],
    [{ branch: '@{-1}' }, 'VALIDATION_FAILED', '/branch'],
    [{ branch: 'a..b' }, 'VALIDATION_FAILED', '/branch'],
    [{ branch: 'HEAD' }, 'VALIDATION_FAILED', '/branch'],
    [{ branch: 'main' }, 'BRANCH_EXISTS', '/branch'],
    [{ branch: 'feat/x' }, 'BRANCH_EXISTS', '/branch'],
    [{ branch: 'grove/../x' }, 'VALIDATION_FAILED', '/branch'],
    [{ base: 'nope' }, 'BASE_NOT_FOUND', '/base'],
    [{ base: 'main..main' }, 'BASE_NOT_FOUND', '/base'],
    [{ base: '--output=/tmp/x' }, 'BASE_NOT_FOUND', '/base'],
  ];
  for (const [extra, code, at] of cases) {
    const r = await createWorktree({ repo, slug: 'x', taken: [], ...extra });
    assert.equal(r.ok, false, JSON.stringify(extra));
    if (r.ok) continue;
    assert.equal(r.code, code, JSON.stringify(extra));
    assert.equal(r.path, at, JSON.stringify(extra));
  }
  assert.deepEqual(repoState(repo), { branches: ['feat', 'main'], worktrees: [], folders: [] });

  const empty = makeTempDir(t);
  git(empty, 'init', '-q', '-b', 'main');
  const none = await createWorktree({ repo: empty, slug: 'x', taken: [] });
  assert.equal(none.ok === false && none.code, 'BASE_NOT_FOUND');

  const linked = makeRepo(t);
  const elsewhere = makeTempDir(t);
  symlinkSync(elsewhere, path.join(linked, '.grove'));
  const r = await createWorktree({ repo: linked, slug: 'x', taken: [] });
  assert.equal(r.ok === false && r.code, 'CONFIG_INVALID');
  assert.deepEqual(readdirSync(elsewhere), [], 'nothing made behind the link');
  assert.deepEqual(repoState(linked).branches, ['main']);
});

test('the intent is written before git runs and kept for the caller to end', async (t) => {
  const repo = makeRepo(t);
  const dir = makeTempDir(t);
  const id = randomUUID();
  const file = path.join(dir, 'journal', `${id}.json`);
  // The hook runs inside `git worktree add`: it sees what was recorded by then.
  const seen = path.join(dir, 'seen');
  writeFileSync(path.join(repo, '.git/hooks/post-checkout'), `#!/bin/sh\ncat '${file}' > '${seen}'\n`, { mode: 0o755 });
  const r = await createWorktree({ repo, slug: 'noted', taken: [], intent: { id, file } });
  assert.ok(r.ok, JSON.stringify(r));
  const head = git(repo, 'rev-parse', 'HEAD');
  const want = { id, repo, branch: 'grove/noted', worktree_path: '.grove/worktrees/noted/', base_commit: head };
  assert.deepEqual(JSON.parse(readFileSync(seen, 'utf8')), want);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), want, 'kept: the caller ends it once the row is stored');

});

test('a foreign lock: a bounded wait, then REPO_LOCKED naming it, the lock kept, nothing made, no intent left', async (t) => {
  const repo = makeRepo(t);
  mkdirSync(path.join(repo, '.git/refs/heads/grove'), { recursive: true });
  const lock = path.join(repo, '.git/refs/heads/grove/held.lock');
  writeFileSync(lock, '');
  const id = randomUUID();
  const file = path.join(makeTempDir(t), `${id}.json`);
  const t0 = Date.now();
  const r = await createWorktree({ repo, slug: 'held', taken: [], intent: { id, file } });
  const waited = Date.now() - t0;
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.code, 'REPO_LOCKED');
  assert.ok(!r.ok && r.message.includes(lock), !r.ok ? r.message : '');
  assert.ok(waited >= LOCK_WAIT_MS - 500, `waited ${waited} ms`);
  assert.ok(existsSync(lock), 'grove never removes a lock it does not own');
  assert.equal(existsSync(file), false, 'the intent goes with the failed creation');
  assert.deepEqual(repoState(repo), { branches: ['main'], worktrees: [], folders: [] });
});

test('a foreign lock released during the wait: the creation goes on', async (t) => {
  const repo = makeRepo(t);
  mkdirSync(path.join(repo, '.git/refs/heads/grove'), { recursive: true });
  const lock = path.join(repo, '.git/refs/heads/grove/brief.lock');
  writeFileSync(lock, '');
  const timer = setTimeout(() => rmSync(lock), 500);
  t.after(() => clearTimeout(timer));
  const t0 = Date.now();
  const r = await createWorktree({ repo, slug: 'brief', taken: [] });
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.branch, 'grove/brief');
  assert.ok(Date.now() - t0 >= 400, 'it waited for the lock');
});

test('a worktree add that hangs in a smudge filter past its bound: GIT_TIMEOUT with its detail, the filter stopped, nothing made, no intent left', { timeout: 30_000 }, async (t) => {
  const m = marker(t);
  const repo = makeRepo(t, { files: { '.gitattributes': '*.slow filter=slow\n', 'x.slow': 'x\n' } });
  git(repo, 'config', 'filter.slow.smudge', `sleep ${m}; cat`);
  const before = repoState(repo);
  const id = randomUUID();
  const file = path.join(makeTempDir(t), `${id}.json`);
  const r = await createWorktree({ repo, slug: 'hung', taken: [], intent: { id, file }, timeout: { ms: 500, detail: 'the add took too long' } });
  assert.deepEqual(r, { ok: false, code: 'GIT_TIMEOUT', message: 'the add took too long' });
  await gone(m);
  assert.deepEqual(repoState(repo), before);
  assert.equal(existsSync(file), false);
  assert.equal(existsSync(path.join(repo, '.git', 'index.lock')), false);
});
