import assert from 'node:assert/strict';
import test from 'node:test';
import { fail } from '../../workers/result.ts';
import { timed } from '../../workers/timeout.ts';
import { git as run } from '../../daemon/git/run.ts';
import { makeRepo } from '../helpers/git.ts';

const bound = { ms: 200, detail: 'the diff took longer than 0.2 s' };

test("timed: a git past the bound is stopped and its failure becomes the bound's GIT_TIMEOUT", async (t) => {
  const repo = makeRepo(t);
  const res = await timed(bound, async (signal) => {
    const r = await run(repo, ['-c', 'alias.hold=!sleep 30', 'hold'], { signal });
    return r.exitCode === 0 ? { ok: true } : fail('INTERNAL', r.stderr);
  });
  assert.deepEqual(res, { ok: false, code: 'GIT_TIMEOUT', message: 'the diff took longer than 0.2 s' });
});

test('timed: within the bound, or without one, the result is kept as it is, a failure too', async () => {
  assert.deepEqual(await timed(bound, async (signal) => ({ ok: true, aborted: signal!.aborted })), { ok: true, aborted: false });
  assert.deepEqual(await timed(bound, async () => fail('BASE_NOT_FOUND', 'no base', '/base')), { ok: false, code: 'BASE_NOT_FOUND', message: 'no base', path: '/base' });
  assert.deepEqual(await timed(undefined, async (signal) => ({ ok: true, signal: signal ?? null })), { ok: true, signal: null });
});
