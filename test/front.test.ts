import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { test } from 'node:test';
import { startDaemon } from './helpers/daemon.ts';
import { readSse, readyTask, waitSessionEnd } from './helpers/sessions.ts';

test('a long event stream through the TCP front reaches a reader that stops for a while, whole and in order', async (t) => {
  const { d, task } = await readyTask(t);
  const n = 60_000; // ~8 MB of events: more than the loopback buffers hold, so the front must wait for the reader
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `print:${n}` } });
  assert.equal(r.status, 201);
  await waitSessionEnd(d, r.json.id);

  // The reader takes nothing for a while: the front's writes fill the connection and it must
  // pause the upstream answer, then resume it once the reader drains.
  const events = await readSse(`http://127.0.0.1:${d.port}/api/sessions/${r.json.id}/output`, { stallMs: 500 });
  const lines = events.filter((e) => e.event === 'line');
  assert.equal(lines.length, n);
  assert.ok(lines.every((e, i) => Number(e.id) === i + 1), 'no gap, no repeat');
  assert.equal(events.at(-1)!.event, 'end');
});

test('the TCP front answers 503 UNAVAILABLE as problem+json when the API socket cannot be reached', async (t) => {
  const d = await startDaemon(t);
  // No request went through the front yet, so it holds no connection: the next one must connect.
  unlinkSync(d.socketPath);
  const r = await d.tcp('GET', '/api/projects');
  assert.equal(r.status, 503);
  assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
  assert.equal(r.json.code, 'UNAVAILABLE');
  assert.equal(r.json.status, 503);
  assert.ok(!r.text.includes('    at '), 'no stack trace');
  const logged = await d.waitForLog((l) => l.msg === 'API socket unreachable');
  assert.equal(logged.module, 'front');
  // The daemon itself keeps running: the front still applies its guards.
  const refused = await d.tcp('GET', '/api/projects', { headers: { origin: 'http://evil.example' } });
  assert.equal(refused.json.code, 'FORBIDDEN_ORIGIN');
  assert.equal(d.proc.exitCode, null);
});
