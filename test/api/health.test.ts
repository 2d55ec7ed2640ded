import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeHome, sharedDaemon, startDaemon } from '../helpers/daemon.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NESTED = path.join('run', 'nested', 'grove.sock');
// One daemon for the first two tests: its socket (GROVE_SOCKET) in folders that grove creates.
const daemon = sharedDaemon((c) => {
  const home = makeHome(c);
  return { home, env: { GROVE_SOCKET: path.join(home, NESTED) } };
});

test('GET /api/health answers on the socket and through the TCP front', async () => {
  const d = await daemon();
  for (const via of [d.socket, d.tcp]) {
    const r = await via('GET', '/api/health');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.json.status, 'ok');
    assert.equal(r.json.pid, d.proc.pid);
    assert.match(r.json.version, /^\d+\.\d+\.\d+/);
    assert.match(r.json.started_at, ISO_MS);
  }
});

test('the socket is 0600 in a 0700 folder that grove creates', async () => {
  const d = await daemon();
  const socketPath = path.join(d.home, NESTED);
  assert.equal(d.socketPath, socketPath);
  const st = statSync(socketPath);
  assert.ok(st.isSocket());
  assert.equal(st.mode & 0o777, 0o600);
  assert.equal(statSync(path.dirname(socketPath)).mode & 0o777, 0o700);
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
});

test('GROVE_PORT=off runs without a TCP front', async (t) => {
  const d = await startDaemon(t, { env: { GROVE_PORT: 'off' } });
  assert.equal(d.port, null);
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
  assert.ok(!d.logs.some((l) => l?.msg === 'TCP front listening'));
});
