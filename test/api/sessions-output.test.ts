import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allLines, gate, readSse, readyTaskOn, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

// A session's output (DESIGN §9) as an event stream: both tests on one daemon, each in its own project.
const daemon = sharedAgentDaemon();

test('SSE follows a live session to its end and resumes after Last-Event-ID without gaps or repeats', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const g = gate(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:3', args: ['print:50', `wait:${g.path}`, 'print:60'] } });
  const id = r.json.id;
  const url = `http://127.0.0.1:${d.port}/api/sessions/${id}/output`;

  // A follower through the TCP front reads the first 20 lines and goes away.
  const first = await readSse(url, { until: (evs) => evs.length >= 20 });
  assert.deepEqual(first.map((e) => Number(e.id)), Array.from({ length: 20 }, (_, i) => i + 1));
  assert.ok(first.every((e) => e.event === 'line' && e.data.seq === Number(e.id)));

  // Another follows live over the socket from the start, while the agent is held at the gate.
  const whole = readSse(`http://localhost/api/sessions/${id}/output`, { socketPath: d.socketPath, until: (evs) => evs.some((e) => e.event === 'end') });
  // The first resumes where it stopped; the rest is printed only once it is connected.
  const resumed = readSse(url, { headers: { 'last-event-id': '20' }, until: (evs) => evs.some((e) => e.event === 'end') });
  await d.waitForLog((l) => l.msg === 'session running' && l.session === id);
  g.release();
  const [all, rest] = await Promise.all([whole, resumed]);

  const lines = rest.filter((e) => e.event === 'line');
  assert.deepEqual(lines.map((e) => e.data.seq), Array.from({ length: 90 }, (_, i) => i + 21), 'no gap, no repeat');
  const end = rest.at(-1)!;
  assert.equal(end.event, 'end');
  assert.equal(end.data.id, id);
  assert.equal(end.data.status, 'failed');
  assert.equal(end.data.exit_code, 3);
  assert.deepEqual(all.filter((e) => e.event === 'line').map((e) => e.data.seq), Array.from({ length: 110 }, (_, i) => i + 1));
  assert.deepEqual(all.at(-1)!.data, end.data);
  assert.deepEqual((await allLines(d, id)).map((l) => l.seq), Array.from({ length: 110 }, (_, i) => i + 1));

  // An ended session's stream replays and ends at once; ?after= works like Last-Event-ID.
  const replay = await readSse(`${url}?after=105`, {});
  assert.deepEqual(replay.map((e) => e.event), ['line', 'line', 'line', 'line', 'line', 'end']);
  const bad = await d.tcp('GET', `/api/sessions/${id}/output`, { headers: { accept: 'text/event-stream', 'last-event-id': 'x' } });
  assert.equal(bad.json.code, 'VALIDATION_FAILED');
});

test('the SSE endpoint is guarded like every other on the TCP front', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'echo:x' } });
  await waitSessionEnd(d, r.json.id);
  const refused: Array<Record<string, string>> = [{ origin: 'https://evil.example' }, { host: 'evil.example' }, { 'sec-fetch-site': 'cross-site' }];
  for (const headers of refused) {
    const res = await d.tcp('GET', `/api/sessions/${r.json.id}/output`, { headers: { accept: 'text/event-stream', ...headers } });
    assert.equal(res.status, 403, JSON.stringify(headers));
    assert.doesNotMatch(res.text, /event: line/);
  }
});
