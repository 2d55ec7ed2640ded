// Which failures of the PostgreSQL driver mean "the store cannot be reached" (answered 503
// STORE_UNAVAILABLE, DESIGN §14.2) and which are a statement's own (answered as before).
import assert from 'node:assert/strict';
import test from 'node:test';
import { createLimiter } from '../../daemon/runtime/limiter.ts';
import { isUnreachable } from '../../daemon/store/driver/postgres.ts';
import { patientReads, STORE_RETRY_MS, StoreUnreachableError } from '../../daemon/store/store.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('the server shutting down or starting, connection exceptions, socket errors and node-postgres timeouts are unreachable', () => {
  for (const code of ['57P01', '57P02', '57P03', '08000', '08001', '08003', '08006', '08P01']) assert.ok(isUnreachable(withCode(code)), code);
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']) assert.ok(isUnreachable(withCode(code)), code);
  for (const message of [
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Query read timeout',
    'Client has encountered a connection error and is not queryable',
  ]) {
    assert.ok(isUnreachable(new Error(message)), message);
  }
  // A connect to a name with several addresses, and an error wrapped around its cause.
  assert.ok(isUnreachable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed')));
  assert.ok(isUnreachable(new Error('wrapped', { cause: withCode('57P01') })));
});

test("a statement's own errors are not: constraint violations, syntax, a cancelled query, a full disk, anything else", () => {
  for (const code of ['23505', '23503', '42601', '42P01', '40001', '57014', '53100', '22P02']) assert.equal(isUnreachable(withCode(code)), false, code);
  assert.equal(isUnreachable(new Error('nested transactions are not supported')), false);
  assert.equal(isUnreachable(withCode('08', 'not a SQLSTATE')), false);
  assert.equal(isUnreachable(null), false);
  assert.equal(isUnreachable('ECONNREFUSED'), false);
  // A cycle of causes ends.
  const a: Error & { cause?: unknown } = new Error('a');
  a.cause = a;
  assert.equal(isUnreachable(a), false);
});

test('reads of open streams wait while the store is unreachable and run again; other errors pass through at once', async () => {
  const reads = patientReads(createLimiter(1));
  let calls = 0;
  const started = Date.now();
  const value = await reads.run(async () => {
    if (++calls < 3) throw new StoreUnreachableError('the store at postgresql://h/db cannot be reached: Connection terminated unexpectedly');
    return 'page';
  });
  assert.equal(value, 'page');
  assert.equal(calls, 3);
  assert.ok(Date.now() - started >= 2 * STORE_RETRY_MS - 100, 'it waited between tries');
  await assert.rejects(
    reads.run(async () => {
      throw new Error('syntax error');
    }),
    /syntax error/,
  );
  // A reader gone: its read is not tried again.
  const ac = new AbortController();
  let tries = 0;
  const gone = reads.run(async () => {
    tries++;
    ac.abort();
    throw new StoreUnreachableError('gone');
  }, ac.signal);
  await assert.rejects(gone, StoreUnreachableError);
  assert.equal(tries, 1);
  assert.ok(reads.idle());
});
