// daemon.ts alone, in-process: its parts start in order on the store main.ts opened under its
// lock, the API answers on the socket and the front, close() stops the parts in reverse order
// once, whatever is asked; a start that fails closes what it had started, the lock and store too.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import test from 'node:test';
import { agentsOf } from '../daemon/agents/agents.ts';
import { withCalls } from '../daemon/client/calls.ts';
import { createTransport } from '../daemon/client/transport.ts';
import { startDaemon } from '../daemon/daemon.ts';
import { acquireDataLock } from '../daemon/runtime/lock.ts';
import { loadSettings } from '../daemon/runtime/settings.ts';
import { openStore } from '../daemon/store/db.ts';
import { StoreUnreachableError } from '../daemon/store/store.ts';
import { makeHome } from './helpers/daemon.ts';
import { memoryLog } from './helpers/store.ts';
import { seedStore } from './helpers/template.ts';

// What main.ts does before startDaemon: the settings of a home of its own, the lock, the store.
async function begin(t: test.TestContext) {
  const home = makeHome(t);
  const settings = loadSettings({ GROVE_HOME: home, GROVE_PORT: '0', PATH: process.env.PATH });
  await seedStore(settings.dataDir);
  const { log, records } = memoryLog();
  const lock = acquireDataLock(settings.dataDir);
  return { settings, log, records, lock, agents: agentsOf(settings) };
}

const closing = (records: any[]) => records.filter((r) => r.msg === 'closing').map((r) => r.part);

test('the parts start in order; the API answers on the socket and the front; close() stops them in reverse once, the lock released', async (t) => {
  const { settings, log, records, lock, agents } = await begin(t);
  const store = openStore({ dataDir: settings.dataDir, log });
  const daemon = await startDaemon(settings, agents, log, { lock, store });
  t.after(() => daemon.close());
  assert.equal(daemon.socketPath, settings.socketPath);
  assert.ok(typeof daemon.port === 'number' && daemon.port > 0, `the front listens: ${daemon.port}`);

  const api = withCalls(createTransport(daemon.socketPath));
  t.after(api.close);
  assert.ok(existsSync(lock.file), 'the lock is held while it runs');
  const health = await api.call<any>('GET', '/api/health');
  assert.equal(health.pid, process.pid);
  const front = await fetch(`http://127.0.0.1:${daemon.port}/api/projects`);
  assert.equal(front.status, 200);
  assert.deepEqual(await front.json(), []);
  await api.close();

  await Promise.all([daemon.close(), daemon.close()]);
  await daemon.close();
  const order = closing(records);
  // The terminals' clients told to come back, then the front, and the lock last: the reverse of
  // the start, each part once.
  assert.deepEqual(order.slice(0, 2), ['terminals', 'front']);
  assert.deepEqual(order.slice(-3), ['configs', 'store', 'lock']);
  assert.equal(new Set(order).size, order.length, `each part closed once: ${order}`);
  assert.ok(order.indexOf('api') < order.indexOf('sessions') && order.indexOf('sessions') < order.indexOf('pool'), `the API before what it calls: ${order}`);
  assert.equal(existsSync(daemon.socketPath), false, 'the socket file is gone');
  assert.equal(existsSync(lock.file), false, 'the lock is given back');
});

test('a start whose store cannot be opened fails with its error and closes what it had started: the lock is free, no socket is left', async (t) => {
  const { settings, log, records, lock, agents } = await begin(t);
  const store = Promise.reject(new StoreUnreachableError('the store at postgres://grove@127.0.0.1:1/grove cannot be reached'));
  await assert.rejects(startDaemon(settings, agents, log, { lock, store }), (err) => err instanceof StoreUnreachableError);
  assert.deepEqual(closing(records).slice(-2), ['store', 'lock'], `closed: ${closing(records)}`);
  assert.equal(existsSync(settings.socketPath), false);
  assert.equal(existsSync(lock.file), false, 'the lock is given back');
});
