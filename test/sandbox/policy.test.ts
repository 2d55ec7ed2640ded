import '../helpers/env.ts';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { policyFor } from '../../daemon/sandbox/policy.ts';
import { git as gitIn, makeTempDir } from '../helpers/git.ts';
import { sandboxFixture } from '../helpers/sandbox.ts';

test("a linked worktree's policy is DESIGN §18's: its git data writable, the repository's config, info, packed-refs and hooks read-only, the secrets hidden", async (t) => {
  const f = sandboxFixture(t);
  mkdirSync(path.join(f.home, '.aws'));
  mkdirSync(path.join(f.home, '.config', 'gh'), { recursive: true });
  gitIn(f.repo, 'pack-refs', '--all');
  const r = policyFor(f.input);
  assert.ok(r.ok, JSON.stringify(r));
  const git = path.join(f.repo, '.git');
  assert.equal(r.policy.worktree, f.worktree);
  assert.deepEqual(r.policy.writable, [
    f.worktree,
    path.join(git, 'objects'),
    path.join(git, 'refs'),
    path.join(git, 'logs'),
    path.join(git, 'worktrees', 'mine'),
    f.input.tmpdir,
    path.join(f.home, '.agent'),
  ]);
  const own = path.join(git, 'worktrees', 'mine');
  assert.deepEqual(r.policy.readOnly.slice(0, 6), [
    path.join(git, 'config'),
    path.join(git, 'info'),
    path.join(git, 'hooks'),
    path.join(own, 'commondir'),
    path.join(own, 'gitdir'),
    path.join(f.worktree, '.git'),
  ]);
  // The repository's folder is scratch inside, with a copy of packed-refs: every other entry of it
  // is bound again read-only.
  assert.deepEqual(r.policy.scratch, [{ path: git, source: f.input.scratchDir }]);
  assert.equal(readFileSync(path.join(f.input.scratchDir, 'packed-refs'), 'utf8'), readFileSync(path.join(git, 'packed-refs'), 'utf8'));
  const entries = readdirSync(git).map((n) => path.join(git, n));
  const writableThere = ['objects', 'refs', 'logs', 'packed-refs'].map((n) => path.join(git, n));
  assert.deepEqual(
    entries.filter((e) => !writableThere.includes(e) && !r.policy.readOnly.includes(e)),
    [],
    'HEAD, index, worktrees/ and the rest read-only',
  );
  assert.ok(r.policy.readOnly.includes(path.join(git, 'HEAD')) && r.policy.readOnly.includes(path.join(git, 'worktrees')));
  assert.deepEqual(r.policy.hidden, [
    { path: path.join(f.home, '.ssh'), kind: 'dir' },
    { path: path.join(f.home, '.aws'), kind: 'dir' },
    { path: path.join(f.home, '.config', 'gh'), kind: 'dir' },
    { path: path.join(f.home, '.netrc'), kind: 'file' },
    { path: f.input.groveData, kind: 'dir' },
    { path: f.input.groveConfig, kind: 'file' },
    { path: f.other, kind: 'dir' },
  ]);
  assert.deepEqual(r.policy.skipped, []);
  assert.ok(!r.policy.writable.some((p) => p === f.repo || p === git || p.startsWith(path.join(git, 'worktrees', 'other'))), 'not the main checkout, the whole git dir or the other worktree');
});

test('paths that are not there are left out; a write path not yet made is reported skipped; symlinks are followed', async (t) => {
  const f = sandboxFixture(t);
  const elsewhere = makeTempDir(t, 'grove-elsewhere-');
  symlinkSync(elsewhere, path.join(f.home, '.gnupg'));
  const r = policyFor({ ...f.input, write: [path.join(f.home, 'cache')], readDeny: [path.join(f.worktree, 'no-such-file')] });
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(r.policy.skipped, [path.join(f.home, 'cache')]);
  assert.ok(!r.policy.writable.includes(path.join(f.home, 'cache')));
  assert.ok(!r.policy.hidden.some((h) => h.path.endsWith('no-such-file') || h.path.endsWith('.aws')));
  assert.ok(r.policy.hidden.some((h) => h.path === elsewhere && h.kind === 'dir'), JSON.stringify(r.policy.hidden));
});

test("the main checkout's policy keeps the repository's config and hooks read-only inside its writable worktree", async (t) => {
  const f = sandboxFixture(t);
  const r = policyFor({ ...f.input, worktree: f.repo });
  assert.ok(r.ok, JSON.stringify(r));
  const git = path.join(f.repo, '.git');
  assert.equal(r.policy.writable[0], f.repo);
  // No packed-refs yet in a fresh repository: left out, not mounted.
  assert.deepEqual(r.policy.readOnly, [path.join(git, 'config'), path.join(git, 'info'), path.join(git, 'hooks')]);
});

test('a folder that is not a git worktree is an answer, not a throw', async (t) => {
  const dir = makeTempDir(t);
  const f = sandboxFixture(t);
  const r = policyFor({ ...f.input, worktree: dir });
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.code === 'NOT_A_GIT_REPO' && r.message.includes(dir), JSON.stringify(r));
});
