import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { Pool } from 'undici';
import { openStore } from '../../daemon/store/db.ts';
import { addProject, makeHome, ROOT, sharedDaemon, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { allEvents, readSse, waitSessionEnd, type SseEvent } from '../helpers/sessions.ts';
import { storeUrlFor } from '../helpers/postgres.ts';
import { seedStore } from '../helpers/template.ts';

const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const AGENTS = { talk: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], format: 'claude' } };

async function daemonWithAgent(t: test.TestContext) {
  const home = makeHome(t);
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: AGENTS, default_agent: 'talk' }));
  return { home, d: await startDaemon(t, { home }) };
}

// The tests that neither restart the daemon nor start from another store share one, each reading
// the events of its own project or from the seq where it began. Its short stall (300 ms) drops
// only a reader whose connection is full: no reader of small events here fills one.
const shared = sharedDaemon((c) => {
  const home = makeHome(c);
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: AGENTS, default_agent: 'talk' }));
  return { home, env: { GROVE_EVENT_STALL_MS: '300' } };
});

const sse = (d: TestDaemon, query: string, until: (evs: SseEvent[]) => boolean, headers: Record<string, string> = {}) =>
  readSse(`http://localhost/api/events${query}`, { socketPath: d.socketPath, until, headers });

test('a full flow in order, each event carrying the resource as its endpoint returns it; filters; the stream equals the pages and resumes without gaps or repeats', async (t) => {
  const d = await shared();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: ['echo hi'] }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'flow' } })).json;
  const s1 = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'one' } })).json;
  await waitSessionEnd(d, s1.id);
  const s2 = (await d.socket('POST', `/api/sessions/${s1.id}/messages`, { body: { prompt: 'two' } })).json;
  await waitSessionEnd(d, s2.id);
  const s2Final = (await d.socket('GET', `/api/sessions/${s2.id}`)).json;
  const other = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'other' } })).json;
  assert.equal((await d.socket('POST', `/api/tasks/${task.id}/merge`)).status, 200);
  const archived = (await d.socket('DELETE', `/api/tasks/${task.id}`)).json;
  assert.equal((await d.socket('DELETE', `/api/tasks/${other.id}`)).status, 200);
  assert.equal((await d.socket('DELETE', `/api/projects/${project.id}`)).status, 204);

  const events = await allEvents(d, `&project_id=${project.id}`);
  const kinds = events.filter((e) => !(e.type === 'session.status' && e.data.status === 'running')).map((e) => `${e.type}${e.task_id === other.id ? '(other)' : ''}`);
  assert.deepEqual(kinds, [
    'project.added',
    'task.created',
    'task.status',
    'session.created',
    'session.result',
    'session.status',
    'session.created',
    'session.result',
    'session.status',
    'task.created(other)',
    'task.status(other)',
    'task.merged',
    'task.archived',
    'task.archived(other)',
    'project.removed',
  ]);
  const seqs = events.map((e) => e.seq);
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  assert.equal(new Set(seqs).size, seqs.length);
  // The data is what the endpoints return.
  const last = (type: string, id: string) => events.findLast((e) => e.type === type && (e.task_id === id || e.session_id === id || e.project_id === id))!.data;
  assert.deepEqual(events[0].data, project);
  assert.deepEqual(last('task.created', task.id).status, 'setting_up');
  assert.deepEqual(last('task.status', task.id).status, 'ready');
  assert.deepEqual(last('task.archived', task.id), archived);
  assert.deepEqual(last('session.status', s2.id), s2Final);
  assert.equal(last('session.created', s2.id).parent_id, s1.id);
  assert.equal(last('session.result', s1.id).result.text, 'got 4 arguments');
  assert.equal(last('task.merged', task.id).merged_commit !== null, true);
  assert.deepEqual(last('project.removed', project.id), project);
  for (const e of events) {
    assert.equal(e.project_id, project.id);
    assert.match(e.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }

  // Filters: one task's events only.
  const onlyTask = await allEvents(d, `&task_id=${s1.task_id}`);
  assert.deepEqual(onlyTask.map((e) => e.seq), events.filter((e) => e.task_id === task.id).map((e) => e.seq));
  assert.deepEqual((await d.socket('GET', `/api/events?task_id=${crypto.randomUUID()}`)).json, { events: [], next: 0 });

  // The stream: the same events as the pages; cut after 5 and resumed with Last-Event-ID, no gap, no repeat.
  const all = await allEvents(d);
  const firstFive = await sse(d, '', (evs) => evs.length >= 5);
  const rest = await sse(d, '', (evs) => evs.length >= all.length - 5, { 'last-event-id': firstFive.at(-1)!.id! });
  const streamed = [...firstFive, ...rest];
  assert.deepEqual(streamed.map((e) => Number(e.id)), all.map((e) => e.seq));
  assert.deepEqual(streamed.map((e) => e.event), all.map((e) => e.type));
  assert.deepEqual(streamed.map((e) => e.data), all);
  const viaAfter = await sse(d, `?after=${all[3].seq}&task_id=${task.id}`, (evs) => evs.length >= 1);
  assert.equal(viaAfter[0]!.data.task_id, task.id);
  assert.ok(Number(viaAfter[0]!.id) > all[3].seq);
  assert.equal((await d.socket('GET', '/api/events?after=-1')).json.code, 'VALIDATION_FAILED');
});

test('seq only grows across restarts, and after a SIGKILL in the middle of a burst every answered change has its event', async (t) => {
  const { home, d } = await daemonWithAgent(t);
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const before = await allEvents(d);
  await d.stop();
  const d2 = await startDaemon(t, { home });
  const p2 = await addProject(d2, makeRepo(t));
  const after = await allEvents(d2);
  assert.deepEqual(after.slice(0, before.length), before, 'kept across the restart');
  assert.ok(after.at(-1).seq > before.at(-1).seq);
  assert.equal(after.at(-1).data.id, p2.id);

  // A burst of creations, the daemon killed while they are under way.
  const answered: string[] = [];
  const burst = Array.from({ length: 20 }, (_, i) =>
    d2.socket('POST', '/api/tasks', { body: { project_id: project.id, name: `burst ${i}` } }).then(
      (r) => void (r.status === 201 && answered.push(r.json.id)),
      () => {},
    ),
  );
  await d2.waitForLog((l) => l.msg === 'task created', 20_000);
  assert.equal(await d2.stop('SIGKILL'), 'SIGKILL');
  await Promise.all(burst);
  const d3 = await startDaemon(t, { home });
  const events = await allEvents(d3);
  const created = new Set(events.filter((e) => e.type === 'task.created').map((e) => e.task_id));
  for (const id of answered) assert.ok(created.has(id), `task ${id} was answered and has its event`);
  const tasks = (await d3.socket('GET', '/api/tasks')).json;
  for (const tk of tasks) assert.ok(created.has(tk.id), `every task in the store has its event (${tk.name})`);
  const seqs = events.map((e) => e.seq);
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  const next = await addProject(d3, makeRepo(t));
  assert.ok((await allEvents(d3)).at(-1).seq > seqs.at(-1)!, 'still growing');
  assert.equal((await allEvents(d3)).at(-1).data.id, next.id);
});

test('100 subscribers each get every event of a burst of 20 creations; 200 that hang up at once leave the fd count and memory as they were', async (t) => {
  const d = await shared();
  const project = await addProject(d, makeRepo(t));
  const from = (await allEvents(d)).at(-1).seq;
  const subscribers = Array.from({ length: 100 }, () => sse(d, `?after=${from}`, (evs) => evs.filter((e) => e.event === 'task.created').length >= 20));
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: `fan ${i}` } })));
  for (const a of answers) assert.equal(a.status, 201);
  const expected = (await allEvents(d)).filter((e) => e.seq > from).map((e) => e.seq);
  const got = await Promise.all(subscribers);
  // Each saw the events in order, none missed, none twice, up to the 20th creation.
  for (const evs of got) assert.deepEqual(evs.map((e) => Number(e.id)), expected.slice(0, evs.length));
  for (const evs of got) assert.equal(evs.filter((e) => e.event === 'task.created').length, 20);

  // 200 streams opened, then all dropped at once.
  const pid = d.proc.pid!;
  const fds = () => readdirSync(`/proc/${pid}/fd`).length;
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  // The subscribers above are gone once the count stops moving.
  for (let last = -1, i = 0; fds() !== last && i < 50; i++) {
    last = fds();
    await new Promise((r) => setTimeout(r, 300));
  }
  const fdsBefore = fds();
  const rssBefore = rss();
  const requests = await Promise.all(
    Array.from(
      { length: 200 },
      () =>
        new Promise<ReturnType<typeof httpRequest>>((resolve, reject) => {
          const req = httpRequest({ socketPath: d.socketPath, path: '/api/events', headers: { accept: 'text/event-stream' } }, (res) => {
            res.once('data', () => resolve(req));
          });
          req.on('error', () => {});
          req.once('error', reject);
          req.end();
        }),
    ),
  );
  // Pool threads that go idle may close their own descriptors meanwhile: what is compared is
  // the drop when the 200 go, and the count against the one before they came.
  const during = fds();
  for (const req of requests) req.destroy();
  await d.socket('GET', '/api/health');
  for (let i = 0; fds() > fdsBefore + 2 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(fds() <= fdsBefore + 2, `fds ${fds()} vs ${fdsBefore}`);
  assert.ok(during - fds() >= 195, `the 200 held their descriptors: ${during} then ${fds()}`);
  assert.ok(rss() < rssBefore + 40, `rss ${rss()} MB vs ${rssBefore} MB`);
});

test('a client too slow to read is dropped with event: end and resumes from its last id; others and the API are not held up', async (t) => {
  const d = await shared();
  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'big events' } })).json;
  // Events that carry a 100 KB prompt each: a few megabytes, more than a socket holds.
  for (let i = 0; i < 8; i++) {
    const s = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `${i}`.padEnd(100_000, '.') } })).json;
    await waitSessionEnd(d, s.id);
  }
  const all = await allEvents(d);
  // This one takes nothing for 2 s: the daemon drops it after 300 ms.
  const slowReader = readSse(`http://localhost/api/events`, { socketPath: d.socketPath, stallMs: 2000, until: (evs) => evs.some((e) => e.event === 'end') });
  const started = Date.now();
  assert.equal((await d.socket('GET', '/api/health')).status, 200);
  assert.ok(Date.now() - started < 1000, 'the API answers meanwhile');
  // The other reader is a client too: dropped on a loaded machine (event: end), it resumes from its last id.
  const other: SseEvent[] = [];
  while (other.length < all.length) {
    const resume: Record<string, string> = other.length > 0 ? { 'last-event-id': String(other.at(-1)!.id) } : {};
    const evs = await sse(d, '', (evs) => evs.some((e) => e.event === 'end') || other.length + evs.length >= all.length, resume);
    other.push(...evs.filter((e) => e.event !== 'end'));
  }
  assert.deepEqual(other.map((e) => Number(e.id)), all.map((e) => e.seq), 'another reader gets everything');
  const got = await slowReader;
  const end = got.at(-1)!;
  assert.equal(end.event, 'end');
  assert.equal(end.data.reason, 'too_slow');
  const seen = got.filter((e) => e.event !== 'end');
  assert.ok(seen.length < all.length, 'it was dropped before the end');
  // It resumes as a client does: from its last id, again if this process, loaded, is once more
  // too slow for the 100 KB events (then its stream ends with event: end as well).
  const resumed = [...seen];
  for (let round = 0; resumed.length < all.length && round < 10; round++) {
    const rest = await sse(d, '', (evs) => evs.length >= all.length - resumed.length || evs.at(-1)?.event === 'end', { 'last-event-id': resumed.at(-1)!.id! });
    resumed.push(...rest.filter((e) => e.event !== 'end'));
  }
  assert.deepEqual(resumed.map((e) => Number(e.id)), all.map((e) => e.seq), 'and resumed with nothing lost');
});

test('500 event streams catching up from the start leave GET /api/tasks answered promptly', async (t) => {
  // A store holding many events older than the daemon: its streams must read them from the store.
  const home = makeHome(t);
  const dataDir = path.join(home, 'data');
  const databaseUrl = await storeUrlFor(home);
  if (databaseUrl === null) await seedStore(dataDir);
  const store = await openStore({ dataDir, databaseUrl, log: pino({ level: 'silent' }) });
  await store.db.query(`INSERT INTO events (type, project_id, data) SELECT 'project.removed', NULL, jsonb_build_object('id', gen_random_uuid(), 'n', n) FROM generate_series(1, 6000) n`);
  await store.close();
  const d = await startDaemon(t, { home });

  const ac = new AbortController();
  t.after(() => ac.abort());
  const streams = new Pool('http://localhost', { socketPath: d.socketPath, connections: 500 });
  t.after(() => streams.destroy());
  await Promise.all(
    Array.from({ length: 500 }, async () => {
      const r = await streams.request({ path: '/api/events?after=0', method: 'GET', headers: { accept: 'text/event-stream' }, signal: ac.signal });
      assert.equal(r.statusCode, 200);
      r.body.on('error', () => {}).resume();
    }),
  );
  const started = Date.now();
  const tasks = await d.socket('GET', '/api/tasks');
  const ms = Date.now() - started;
  console.log(`GET /api/tasks took ${ms} ms behind 500 catching-up streams`);
  assert.equal(tasks.status, 200);
  assert.ok(ms < 2000, `took ${ms} ms`);
});
