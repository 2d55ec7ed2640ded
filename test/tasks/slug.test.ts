import assert from 'node:assert/strict';
import test from 'node:test';
import { slugify } from '../../daemon/tasks/slug.ts';

test('slugify keeps lowercase ASCII letters, digits and single dashes', () => {
  assert.equal(slugify('Fix the Login Bug'), 'fix-the-login-bug');
  assert.equal(slugify('feat/x: add 2 things!'), 'feat-x-add-2-things');
  assert.equal(slugify('  --already--dashed--  '), 'already-dashed');
});

test('slugify folds accents and drops everything else, so no name yields an option, a path or a bad ref', () => {
  assert.equal(slugify('Café Ünïcödé'), 'cafe-unicode');
  assert.equal(slugify('../../etc/passwd; rm -rf ~ --force'), 'etc-passwd-rm-rf-force');
  assert.equal(slugify('--upload-pack=evil'), 'upload-pack-evil');
  assert.equal(slugify('x.lock'), 'x-lock');
  assert.equal(slugify('a@{-1}'), 'a-1');
  for (const s of ['-x', '../y', 'HEAD', 'a b', 'a\u0000b', 'ref~1']) assert.match(slugify(s), /^[a-z0-9]+(-[a-z0-9]+)*$/, s);
});

test('a name with nothing usable becomes "task"', () => {
  assert.equal(slugify('日本語'), 'task');
  assert.equal(slugify(''), 'task');
  assert.equal(slugify('!!!'), 'task');
});

test('at most 48 characters, never ending in a dash after the cut', () => {
  assert.equal(slugify('a'.repeat(200)), 'a'.repeat(48));
  assert.equal(slugify(`${'a'.repeat(47)} b`), 'a'.repeat(47));
  assert.equal(slugify('abc def', 5), 'abc-d');
  assert.equal(slugify('abc def', 4), 'abc');
});
