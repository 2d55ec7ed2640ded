import assert from 'node:assert/strict';
import test from 'node:test';
import { checkPty } from '../../daemon/terminal/check.ts';

test('checkPty: a program runs to its end under a pseudo-terminal here, with a terminal for its stdout', async () => {
  assert.deepEqual(await checkPty(), { ok: true });
});
