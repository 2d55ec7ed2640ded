import assert from 'node:assert/strict';
import test from 'node:test';
import { str } from '../../daemon/runtime/str.ts';

test('str: a non-empty string is itself; empty, absent or another type is null', () => {
  assert.equal(str('abc'), 'abc');
  assert.equal(str(' '), ' ', 'whitespace is text');
  for (const v of ['', undefined, null, 0, 1, true, {}, ['a'], new String('a')]) assert.equal(str(v), null, `${String(v)}`);
});
