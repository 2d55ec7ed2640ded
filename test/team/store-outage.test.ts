// PostgreSQL gone under a running daemon (DESIGN §14.2 "Faults"): the agent keeps running, the
// API answers 503 STORE_UNAVAILABLE at once, and once PostgreSQL is back the daemon recovers by
// itself with every line stored once and the session's end recorded.
import assert from 'node:assert/strict';
import test from 'node:test';
import { addProject, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { ownPostgresServer } from '../helpers/postgres.ts';
import { agentHome, allLines, gate, readSse, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

// A request while the store is gone: 503 STORE_UNAVAILABLE with Retry-After, within a few seconds.
async function unavailable(d: TestDaemon, method: string, url: string, body?: object) {
  const started = Date.now();
  const r = await d.socket(method, url, body ? { body } : {});
  const ms = Date.now() - started;
  assert.equal(r.status, 503, `${method} ${url}: ${r.status} ${r.text}`);
  assert.equal(r.headers['content-type'], 'application/problem+json');
  assert.equal(r.json.code, 'STORE_UNAVAILABLE');
  assert.ok(Number(r.headers['retry-after']) > 0, `${method} ${url}: Retry-After ${r.headers['retry-after']}`);
  assert.doesNotMatch(r.json.detail, /password|:[0-9a-f]{24}@/, 'the detail never shows the password');
  assert.ok(ms < 4000, `${method} ${url} answered in ${ms} ms`);
}

// A daemon with the fixture agent on a PostgreSQL of the test's own, and a ready task.
async function outage(t: test.TestContext) {
  const pg = await ownPostgresServer(t);
  const d = await startDaemon(t, { home: agentHome(t), env: { GROVE_DATABASE_URL: await pg.freshDatabase() } });
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'outage' } })).json;
  assert.equal(task.status, 'ready');
  return { pg, d, project, task };
}

test('PostgreSQL stopped mid-output: 503 STORE_UNAVAILABLE at once, then recovery by itself with every line once and the end recorded', async (t) => {
  const { pg, d, project, task } = await outage(t);

  // 200 lines stored, then the agent waits; released while PostgreSQL is down, it prints 500
  // more and exits 3 before PostgreSQL is back.
  const g = gate(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:3', args: ['print:200', `wait:${g.path}`, 'print:500'] } });
  assert.equal(s.status, 201, s.text);
  const id = s.json.id;
  await d.waitForLog((l) => l.msg === 'session running' && l.session === id);
  await until(async () => (await allLines(d, id)).length === 200, 'the first lines stored');
  const lastSeq = (await d.socket('GET', '/api/events?limit=1000')).json.next;
  // Streams open across the outage: they wait, then carry on to the session's end.
  const ended = (evs: Array<{ event: string; data: any }>) => evs.some((e) => e.event === 'session.status' && e.data.session_id === id && e.data.data?.status === 'failed');
  const seen = { lines: 0, events: 0 };
  const output = readSse(`http://localhost/api/sessions/${id}/output`, {
    socketPath: d.socketPath,
    until: (evs) => ((seen.lines = evs.length), evs.some((e) => e.event === 'end')),
  });
  const events = readSse('http://localhost/api/events', {
    socketPath: d.socketPath,
    headers: { 'last-event-id': String(lastSeq) },
    until: (evs) => ((seen.events = evs.length), ended(evs)),
  });
  assert.equal((await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'an event' } })).status, 201);
  await until(() => seen.lines >= 200 && seen.events > 0, 'both streams open');

  pg.stop('fast');
  await unavailable(d, 'GET', '/api/tasks');
  await unavailable(d, 'POST', `/api/sessions/${id}/messages`, { prompt: 'and then?' });
  await unavailable(d, 'GET', `/api/sessions/${id}/output`);
  await unavailable(d, 'GET', `/api/sessions/${id}`);
  assert.equal((await d.socket('GET', '/api/health')).status, 200, 'health answers without the store');

  // The agent is not stopped by the outage: it prints the rest and exits.
  g.release();
  await d.waitForLog((l) => l.msg === 'storing the end of session output failed; will retry' && l.session === id, 60_000);
  await unavailable(d, 'GET', `/api/sessions/${id}`);

  const back = Date.now();
  pg.start();
  const end = await waitSessionEnd(d, id);
  assert.equal(end.status, 'failed');
  assert.equal(end.exit_code, 3);

  const rec = (await d.socket('GET', `/api/sessions/${id}`)).json;
  assert.equal(rec.status, 'failed');
  assert.equal(rec.exit_code, 3);
  const lines = await allLines(d, id);
  assert.deepEqual(
    lines.map((l) => l.seq),
    Array.from({ length: 700 }, (_, i) => i + 1),
  );
  assert.deepEqual(
    lines.map((l) => l.text.trim()),
    [...numbered(200), ...numbered(500)],
    'every line once, in order',
  );

  // The streams held open across the outage carried on: every line once, then the end.
  const followed = await output;
  assert.deepEqual(
    followed.filter((e) => e.event === 'line').map((e: any) => e.data.seq),
    Array.from({ length: 700 }, (_, i) => i + 1),
  );
  assert.equal((followed.at(-1)!.data as any).status, 'failed');
  assert.ok(ended((await events) as any));
  // A stream opened now resumes from where a client left off.
  assert.ok(ended((await readSse('http://localhost/api/events', { socketPath: d.socketPath, headers: { 'last-event-id': String(lastSeq) }, until: ended })) as any));

  // Writes work again, and the heartbeat has resumed on its own.
  const after = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'after' } });
  assert.equal(after.status, 201, after.text);
  await until(
    async () => (await d.socket('GET', '/api/hosts')).json.some((h: any) => h.online && Date.parse(h.seen_at) >= back - 1000),
    'a heartbeat after PostgreSQL is back',
    20_000,
  );
  assert.equal(await d.stop(), 0, 'a clean stop');
});

test("a session's timeout_s that passes while PostgreSQL is down: the kill is tried again and done once it is back", async (t) => {
  const { pg, d, task } = await outage(t);
  const g = gate(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { args: ['echo:waiting', `wait:${g.path}`], timeout_s: 5 } });
  assert.equal(s.status, 201, s.text);
  const id = s.json.id;
  await d.waitForLog((l) => l.msg === 'session running' && l.session === id);

  pg.stop('fast');
  await d.waitForLog((l) => l.msg === 'killing a timed-out session failed' && l.session === id, 30_000);
  pg.start();
  const end = await waitSessionEnd(d, id);
  assert.equal(end.status, 'killed');
  const rec = (await d.socket('GET', `/api/sessions/${id}`)).json;
  assert.equal(rec.status, 'killed');
  assert.equal(rec.timed_out, true);
});
