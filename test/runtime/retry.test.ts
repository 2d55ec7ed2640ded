import assert from 'node:assert/strict';
import test from 'node:test';
import { retryAfterMs, retryDelay, retrying } from '../../daemon/runtime/retry.ts';

test('retry: the delay is steady by default, grows by its factor, and stops at its cap', () => {
  assert.deepEqual([1, 2, 3].map((n) => retryDelay({ delayMs: 500 }, n)), [500, 500, 500]);
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => retryDelay({ delayMs: 100, factor: 2, maxDelayMs: 500 }, n)), [100, 200, 400, 500, 500]);
});

test('retry: tried again after a retryable failure until it goes through; a failure that is not retryable goes through at once', async () => {
  let n = 0;
  const started = Date.now();
  const v = await retrying(
    async () => {
      if (++n < 3) throw new Error('flaky');
      return 'done';
    },
    { policy: { delayMs: 20 }, retryable: (err) => (err as Error).message === 'flaky' },
  );
  assert.equal(v, 'done');
  assert.equal(n, 3);
  assert.ok(Date.now() - started >= 2 * 20 - 5, 'it waited between tries');
  n = 0;
  await assert.rejects(
    retrying(
      async () => {
        n++;
        throw new Error('refused');
      },
      { policy: { delayMs: 20 }, retryable: (err) => (err as Error).message === 'flaky' },
    ),
    /refused/,
  );
  assert.equal(n, 1);
});

test('retry: `tries` bounds the tries in all, throwing the last failure', async () => {
  let n = 0;
  await assert.rejects(
    retrying(
      async () => {
        throw new Error(`try ${++n}`);
      },
      { policy: { delayMs: 1, tries: 4 }, retryable: () => true },
    ),
    /try 4/,
  );
  assert.equal(n, 4);
});

test('retry: an abort cuts the wait short (an AbortError) and ends the tries', async () => {
  const ac = new AbortController();
  let n = 0;
  const p = retrying(
    async () => {
      n++;
      setImmediate(() => ac.abort(new Error('gone')));
      throw new Error('down');
    },
    { policy: { delayMs: 60_000 }, retryable: () => true, signal: ac.signal },
  );
  await assert.rejects(p, { name: 'AbortError' });
  assert.equal(n, 1);
  // Aborted before a failure: the failure itself goes through.
  await assert.rejects(retrying(async () => Promise.reject(new Error('down')), { policy: { delayMs: 1 }, retryable: () => true, signal: AbortSignal.abort() }), /down/);
});

test('retryAfterMs: seconds, or an HTTP date from now; anything else is no wait asked for', () => {
  const now = Date.parse('2026-11-27T12:00:00Z');
  assert.equal(retryAfterMs('2', now), 2000);
  assert.equal(retryAfterMs(' 0 ', now), 0);
  assert.equal(retryAfterMs('Fri, 27 Nov 2026 12:00:05 GMT', now), 5000);
  assert.equal(retryAfterMs('Fri, 27 Nov 2026 11:00:00 GMT', now), 0, 'a date gone by: at once');
  for (const v of [undefined, null, '', '-1', '1.5', 'soon', '2026-11-27']) assert.equal(retryAfterMs(v, now), undefined, String(v));
});

test('retry: the wait a failure asks for (its Retry-After) replaces the policy delay, within the policy cap', async () => {
  const tryTimes: number[] = [];
  const flaky = (asked: number) => async () => {
    tryTimes.push(Date.now());
    if (tryTimes.length % 2 === 1) throw Object.assign(new Error('later'), { asked });
    return 'done';
  };
  const opts = (policy: { delayMs: number; maxDelayMs?: number }) => ({ policy, retryable: () => true, asked: (err: unknown) => (err as { asked?: number }).asked });
  // The policy alone would wait 30 s: the 50 ms asked for is what is waited.
  assert.equal(await retrying(flaky(50), opts({ delayMs: 30_000 })), 'done');
  const first = tryTimes[1]! - tryTimes[0]!;
  assert.ok(first >= 45 && first < 5_000, `waited ${first} ms`);
  // 30 s asked for, a cap of 60 ms: the cap.
  assert.equal(await retrying(flaky(30_000), opts({ delayMs: 10, maxDelayMs: 60 })), 'done');
  const second = tryTimes[3]! - tryTimes[2]!;
  assert.ok(second >= 55 && second < 5_000, `waited ${second} ms`);
});
