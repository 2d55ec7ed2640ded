// One team stream, reads from anywhere (DESIGN §14.2): every daemon on the shared store carries
// every host's events and pages and follows every host's session output; hooks run where their
// event happened.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { AGENT, allEvents, allLines, gate, readSse, type SseEvent } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { within } from '../helpers/within.ts';
import { sharedTeam, type Team } from '../helpers/team.ts';

// Where each host's hook writes the events it ran on, one JSON line each.
let hookDir = '';

// One team for the file: alpha and beta, the same hook and the fixture agent on both.
const theTeam = sharedTeam((c) => {
  hookDir = makeTempDir(c);
  return {
    hosts: ['alpha', 'beta'],
    config: (name) => ({
      agents: { fixture: { command: [AGENT, '{prompt}'] } },
      hooks: [{ on: ['task.created'], command: ['sh', '-c', `cat >> ${path.join(hookDir, `${name}.jsonl`)}`] }],
    }),
  };
});

// Follows `url` on `d` until `until` says it has what it waited for; a stream that never gets
// there fails the test (rather than hanging it).
const sse = (d: TestDaemon, url: string, opts: { headers?: Record<string, string>; until: (events: SseEvent[]) => boolean }) =>
  within(60_000, `following ${url}`, readSse(`http://localhost${url}`, { socketPath: d.socketPath, ...opts }));

async function newTask(d: TestDaemon, projectId: string, name: string): Promise<any> {
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, name } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

test("events of host A reach B's SSE within a second; B resumes after Last-Event-ID and filters by A's project and task", async () => {
  const team = await theTeam();
  const [a, b] = team.hosts as [Team['hosts'][0], Team['hosts'][0]];
  const from = (await b.daemon.socket('GET', '/api/health')).json.last_event_seq;
  // When B's follower got each event of A's project.
  const arrived = new Map<number, number>();
  const ofA = (e: SseEvent) => e.data?.project_id === a.project.id;
  const following = sse(b.daemon, `/api/events?after=${from}`, {
    until: (events) => {
      // Called for keep-alive comments too: the newest event may have been seen already.
      const e = events.at(-1);
      if (!e || !ofA(e)) return false;
      if (!arrived.has(e.data.seq)) arrived.set(e.data.seq, Date.now());
      return e.event === 'task.created' && e.data.data?.name === 'second from alpha';
    },
  });
  const one = await newTask(a.daemon, a.project.id, 'first from alpha');
  const two = await newTask(a.daemon, a.project.id, 'second from alpha');
  const seen = (await following).filter(ofA);
  assert.deepEqual(
    seen.filter((e) => e.event === 'task.created').map((e) => e.data.task_id),
    [one.id, two.id],
  );
  assert.deepEqual(
    seen.map((e) => e.data.seq),
    seen.map((e) => e.data.seq).sort((x, y) => x - y),
    'in seq order',
  );
  const task = one;
  const hostA = (await b.daemon.socket('GET', '/api/hosts')).json.find((h: any) => h.name === 'alpha').id;
  for (const e of seen) {
    assert.equal(e.data.host_id, hostA, 'each event says where it happened');
    // From the commit's time (the store's clock, on this machine) to B's follower.
    const ms = arrived.get(e.data.seq)! - Date.parse(e.data.at);
    assert.ok(ms < 1000, `${e.event} took ${ms} ms from A's commit to B's SSE`);
  }

  // Last-Event-ID on B: the events after it, as B's pages have them, whoever recorded them.
  const first = seen[0]!.data.seq;
  const pageAfter = (await b.daemon.socket('GET', `/api/events?after=${first}&limit=5000`)).json.events;
  const last = pageAfter.at(-1).seq;
  const resumed = await sse(b.daemon, '/api/events', { headers: { 'last-event-id': String(first) }, until: (events) => events.at(-1)?.data?.seq === last });
  assert.deepEqual(
    resumed.map((e) => e.data.seq),
    pageAfter.map((e: any) => e.seq),
  );
  assert.ok(resumed.some((e) => e.data.seq === seen.at(-1)!.data.seq));

  // Filters on B by A's project and A's task: only theirs, the same as A answers.
  const byProject = await allEvents(b.daemon, `&project_id=${a.project.id}`);
  assert.ok(byProject.length >= 3 && byProject.every((e) => e.project_id === a.project.id));
  assert.deepEqual(byProject, await allEvents(a.daemon, `&project_id=${a.project.id}`));
  assert.deepEqual(
    byProject.filter((e) => e.type === 'project.added').map((e) => e.data.id),
    [a.project.id],
  );
  const byTask = await allEvents(b.daemon, `&task_id=${task.id}`);
  assert.deepEqual(
    byTask.map((e) => e.seq),
    seen.filter((e) => e.data.task_id === task.id).map((e) => e.data.seq),
  );
  const followedTask = await sse(b.daemon, `/api/events?task_id=${task.id}&after=0`, { until: (events) => events.length === byTask.length });
  assert.deepEqual(
    followedTask.map((e) => e.data),
    byTask,
  );
});

test("a session of host A, started through A's own socket, paged and followed on B to its end: every line once, in order", async (t) => {
  const team = await theTeam();
  const [a, b] = team.hosts as [Team['hosts'][0], Team['hosts'][0]];
  const task = await newTask(a.daemon, a.project.id, 'output');
  assert.equal(task.status, 'ready');
  const g = gate(t);
  // 200 lines, then it waits at the gate, then 300 more and it exits.
  const r = await a.daemon.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'fixture', prompt: 'print:300', args: ['print:200', `wait:${g.path}`] } });
  assert.equal(r.status, 201, r.text);
  const id = r.json.id;

  // B follows from the start; it opens the gate once it has followed the first 200 lines live.
  let opened = false;
  const events = await sse(b.daemon, `/api/sessions/${id}/output`, {
    until: (evs) => {
      if (!opened && evs.filter((e) => e.event === 'line').length >= 200) {
        opened = true;
        g.release();
      }
      return evs.at(-1)?.event === 'end';
    },
  });
  assert.ok(opened, 'the first lines came while the session waited at the gate');
  const lines = events.filter((e) => e.event === 'line');
  const expected = [...Array.from({ length: 200 }, (_, i) => `line ${i + 1}`), ...Array.from({ length: 300 }, (_, i) => `line ${i + 1}`)];
  assert.deepEqual(
    lines.map((e) => e.data.text.trim()),
    expected,
  );
  assert.deepEqual(
    lines.map((e) => e.data.seq),
    expected.map((_, i) => i + 1),
  );
  assert.deepEqual(
    lines.map((e) => Number(e.id)),
    expected.map((_, i) => i + 1),
  );
  const end = events.at(-1)!;
  assert.equal(end.event, 'end');
  assert.equal(end.data.id, id);
  assert.equal(end.data.status, 'exited');
  assert.equal(end.data.host_id, a.project.host_id);
  assert.equal(events.filter((e) => e.event === 'end').length, 1);

  // Paged on B: the same lines; the session as A answers it.
  assert.deepEqual(
    await allLines(b.daemon, id),
    lines.map((e) => e.data),
  );
  assert.deepEqual((await b.daemon.socket('GET', `/api/sessions/${id}`)).json, (await a.daemon.socket('GET', `/api/sessions/${id}`)).json);
  // Followed on B after its end: its lines after `after`, then the end at once.
  const rest = await sse(b.daemon, `/api/sessions/${id}/output?after=490`, { until: (evs) => evs.at(-1)?.event === 'end' });
  assert.deepEqual(
    rest.map((e) => e.event),
    [...Array(10).fill('line'), 'end'],
  );
});

test('hooks run where the event happened: the same hook on A and B, a task of A runs it on A only, one of B on B only', async () => {
  const team = await theTeam();
  const [a, b] = team.hosts as [Team['hosts'][0], Team['hosts'][0]];
  const ofA = await newTask(a.daemon, a.project.id, 'hooked alpha');
  // B's task is recorded after A's: B's bus passed A's task.created to its hooks before this one.
  const ofB = await newTask(b.daemon, b.project.id, 'hooked beta');
  const ran = (host: string) => {
    const file = path.join(hookDir, `${host}.jsonl`);
    return existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  };
  await until(() => ran('alpha').some((e) => e.task_id === ofA.id), "A's hook on A's task");
  await until(() => ran('beta').some((e) => e.task_id === ofB.id), "B's hook on B's task");
  // Each host ran it on its own events only (other tests' tasks of A included).
  const idOf = (project: any) => project.host_id;
  assert.deepEqual([...new Set(ran('alpha').map((e) => e.host_id))], [idOf(a.project)]);
  assert.deepEqual([...new Set(ran('beta').map((e) => e.host_id))], [idOf(b.project)]);
  assert.ok(!ran('beta').some((e) => e.task_id === ofA.id));
  // Yet B's stream carries A's task: B saw it and did not run its hook.
  assert.ok((await allEvents(b.daemon, `&task_id=${ofA.id}`)).some((e) => e.type === 'task.created'));
});

test("a task's setup on host A followed on B until it ends: each command and line once, then the ready task", async (t) => {
  const team = await theTeam();
  const [a, b] = team.hosts as [Team['hosts'][0], Team['hosts'][0]];
  const g = gate(t);
  const project = await addProject(a.daemon, makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: ['echo first', `read -r _ < ${g.path}; echo last`] }) } }));
  const r = await a.daemon.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'set up on alpha', wait: false } });
  assert.equal(r.status, 202, r.text);
  // B opens the gate once it has followed the first command's line live.
  let opened = false;
  const events = await sse(b.daemon, `/api/tasks/${r.json.id}/setup`, {
    until: (evs) => {
      if (!opened && evs.some((e) => e.event === 'line' && e.data.text === 'first')) {
        opened = true;
        g.release();
      }
      return evs.at(-1)?.event === 'end';
    },
  });
  assert.ok(opened);
  assert.deepEqual(
    events.filter((e) => e.event === 'line').map((e) => e.data.text),
    ['first', 'last'],
  );
  assert.equal(events.filter((e) => e.event === 'command').length, 4, 'two commands, each started and ended');
  assert.equal(events.at(-1)!.data.status, 'ready');
});
