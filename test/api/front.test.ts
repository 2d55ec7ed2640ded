import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { startDaemon } from '../helpers/daemon.ts';
import { readSse, readyTaskOn, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

// The daemon's TCP front: the tests that keep it whole share one daemon, each in its own project.
const daemon = sharedAgentDaemon();

test('a long event stream through the TCP front reaches a reader that stops for a while, whole and in order', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
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

test('80 event streams open through the TCP front leave plain requests answered at once', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:120' } });
  assert.equal(s.status, 201);
  // ended through the API while the shared daemon runs: a session outlives its daemon
  t.after(() => d.socket('DELETE', `/api/sessions/${s.json.id}`));
  // Each stream on a connection of its own, as browser tabs and `curl -N` followers are.
  const ac = new AbortController();
  t.after(() => ac.abort());
  const dispatcher = new Agent({ connections: null });
  t.after(() => dispatcher.destroy());
  const urls = Array.from({ length: 80 }, (_, i) => (i % 4 === 0 ? `/api/sessions/${s.json.id}/output` : '/api/events?after=0'));
  let ok = 0;
  const all = Promise.all(
    urls.map(async (u) => {
      const r = await request(`http://127.0.0.1:${d.port}${u}`, { dispatcher, headers: { accept: 'text/event-stream' }, signal: ac.signal });
      r.body.on('error', () => {});
      if (r.statusCode === 200) ok++;
    }),
  ).catch(() => {});
  // A deadline, not a wait: the streams that cannot get through stay open meanwhile.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
  clearTimeout(timer);

  const started = Date.now();
  const plain = (p: string) => request(`http://127.0.0.1:${d.port}${p}`, { signal: AbortSignal.timeout(5000) }).then(async (r) => (await r.body.text(), r.statusCode));
  const [health, page] = await Promise.allSettled([plain('/api/health'), plain('/')]);
  console.log(`streams open: ${ok} of ${urls.length}; plain requests took ${Date.now() - started} ms: ${JSON.stringify([health, page].map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason))))}`);
  assert.equal(ok, urls.length, 'every stream was answered');
  assert.deepEqual([health, page].map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason))), [200, 200]);
});
