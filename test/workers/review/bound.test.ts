import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import test from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { git as run } from '../../../daemon/git/run.ts';
import { bounded } from '../../../workers/review/bound.ts';
import { fail } from '../../../workers/result.ts';
import { makeRepo } from '../../helpers/git.ts';

// A review task that holds git until its signal stops it, and fails then as git failed.
const holding = bounded(async (input: { repo: string }, signal) => {
  const r = await run(input.repo, ['-c', 'alias.hold=!sleep 30', 'hold'], { signal });
  return r.exitCode === 0 ? { ok: true } : fail('INTERNAL', r.stderr);
});

// The daemon keeps the bound's clock: it says 'timeout' on the port when the bound runs out.
function bound() {
  const { port1, port2 } = new MessageChannel();
  return { bound: { detail: 'the diff took longer than its bound', code: 'GIT_TIMEOUT' as const, port: port2 }, cancel: port1 };
}

test("bounded: told its bound ran out, the task stops and its failure is the bound's code and detail", async (t) => {
  const repo = makeRepo(t);
  const { bound: b, cancel } = bound();
  t.after(() => cancel.close());
  const res = holding({ repo, bound: b });
  cancel.postMessage('timeout');
  assert.deepEqual(await res, { ok: false, code: 'GIT_TIMEOUT', message: 'the diff took longer than its bound' });
});

test('bounded: any other message on the port (the client has gone) stops it as UNAVAILABLE', async (t) => {
  const repo = makeRepo(t);
  const { bound: b, cancel } = bound();
  t.after(() => cancel.close());
  const res = holding({ repo, bound: b });
  cancel.postMessage('gone');
  assert.deepEqual(await res, { ok: false, code: 'UNAVAILABLE', message: 'stopped: the client has gone' });
});

test('bounded: a result within the bound is kept as it is, a failure too, and the input arrives without the bound', async (t) => {
  const echo = bounded(async (input: { n: number }, signal) => (input.n > 0 ? { ok: true, input, aborted: signal.aborted } : fail('NOT_FOUND', 'no n')));
  const one = bound();
  const two = bound();
  t.after(() => {
    one.cancel.close();
    two.cancel.close();
  });
  assert.deepEqual(await echo({ n: 1, bound: one.bound }), { ok: true, input: { n: 1 }, aborted: false });
  assert.deepEqual(await echo({ n: 0, bound: two.bound }), { ok: false, code: 'NOT_FOUND', message: 'no n' });
});
