import assert from 'node:assert/strict';
import test from 'node:test';
import { branchFree, checkBranchName, suffixed } from '../../../workers/worktree/names.ts';
import { makeRepo } from '../../helpers/git.ts';

test('suffixed: the slug itself first, then -2, -3… within 48 characters and without a double dash', () => {
  assert.equal(suffixed('fix', 1), 'fix');
  assert.equal(suffixed('fix', 2), 'fix-2');
  assert.equal(suffixed('fix', 13), 'fix-13');
  assert.equal(suffixed('a'.repeat(48), 2), `${'a'.repeat(46)}-2`);
  assert.equal(suffixed('a'.repeat(48), 100), `${'a'.repeat(44)}-100`);
  // Cut right after a dash: the dash goes, so no "--2".
  assert.equal(suffixed(`${'a'.repeat(45)}-bc`, 2), `${'a'.repeat(45)}-2`);
  assert.equal(suffixed(`${'a'.repeat(46)}-b`, 2), `${'a'.repeat(46)}-2`);
});

test('branchFree: no equal branch, and no directory/file clash either way', () => {
  const refs = new Set(['refs/heads/main', 'refs/heads/feat', 'refs/heads/team/alice/x']);
  assert.equal(branchFree('main', refs), false);
  assert.equal(branchFree('feat/x', refs), false, 'feat is a branch, so feat/x cannot be');
  assert.equal(branchFree('team', refs), false, 'team/… exists, so team cannot be');
  assert.equal(branchFree('team/alice', refs), false);
  assert.equal(branchFree('team/bob', refs), true);
  assert.equal(branchFree('feature', refs), true, 'a shared prefix is no clash');
  assert.equal(branchFree('mai', refs), true);
});

test("checkBranchName: git's own rules plus the forms git would expand or read as an option", async (t) => {
  const repo = makeRepo(t);
  for (const ok of ['feature/login', 'grove/x-2', 'UPPER', 'a.b']) assert.equal(await checkBranchName(repo, ok), null, ok);
  for (const bad of ['-x', '--force', 'HEAD', '@{-1}', 'a@{u}', 'a..b', 'x.lock', 'a b', 'feat/', 'a:b', 'a~1', 'a\u0001b', '']) {
    const r = await checkBranchName(repo, bad);
    assert.equal(r?.code, 'VALIDATION_FAILED', JSON.stringify(bad));
    assert.equal(r?.path, '/branch');
  }
});
