import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { addProject } from './helpers/daemon.ts';
import { makeRepo } from './helpers/git.ts';
import { allLines, gate, liveGroupMembers, readSse, readyTask, waitSessionEnd } from './helpers/sessions.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test("a session with the project's default agent: 201 starting + pid, listed, running, exited with every line", async (t) => {
  const { d, task } = await readyTask(t);
  const g = gate(t);
  const r = await d.tcp('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'echo:last', args: ['echo:first', `wait:${g.path}`, 'print:100'] } });
  assert.equal(r.status, 201, r.text);
  const s = r.json;
  assert.equal(s.status, 'starting');
  assert.equal(s.agent, 'fixture');
  assert.equal(s.task_id, task.id);
  assert.ok(Number.isInteger(s.pid) && s.pid > 1);
  assert.match(s.created_at, ISO_MS);
  assert.equal(s.exit_code, null);
  assert.equal(s.ended_at, null);

  const list = await d.socket('GET', `/api/tasks/${task.id}/sessions`);
  assert.deepEqual(list.json.map((x: any) => [x.id, x.created_at]), [[s.id, s.created_at]]);
  await d.waitForLog((l) => l.msg === 'session running' && l.session === s.id);
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.status, 'running');

  const ended = waitSessionEnd(d, s.id);
  g.release();
  await ended;
  const final = (await d.socket('GET', `/api/sessions/${s.id}`)).json;
  assert.equal(final.status, 'exited');
  assert.equal(final.exit_code, 0);
  assert.match(final.ended_at, ISO_MS);
  const lines = await allLines(d, s.id);
  assert.equal(lines.length, 102);
  assert.deepEqual(lines.map((l) => l.seq), Array.from({ length: 102 }, (_, i) => i + 1));
  assert.equal(lines[0].text, 'first');
  assert.equal(lines[1].text.trimEnd(), 'line 1');
  assert.equal(lines[100].text.trimEnd(), 'line 100');
  assert.equal(lines[101].text, 'last');
  assert.ok(lines.every((l) => l.stream === 'stdout' && ISO_MS.test(l.at)));

  // Pages: after/limit/next.
  const page = (await d.socket('GET', `/api/sessions/${s.id}/output?after=10&limit=5`)).json;
  assert.deepEqual(page.lines.map((l: any) => l.seq), [11, 12, 13, 14, 15]);
  assert.equal(page.next, 15);
  const empty = (await d.socket('GET', `/api/sessions/${s.id}/output?after=102`)).json;
  assert.deepEqual(empty, { lines: [], next: 102 });
  for (const q of ['limit=0', 'limit=5001', 'after=-1', 'after=x', 'colour=red']) {
    assert.equal((await d.socket('GET', `/api/sessions/${s.id}/output?${q}`)).json.code, 'VALIDATION_FAILED', q);
  }
});

test('a non-zero exit is failed with its exit code; stderr lines are marked stderr', async (t) => {
  const { d, task } = await readyTask(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:7', args: ['echo:out', 'err:problem'] } });
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'failed');
  assert.equal(s.exit_code, 7);
  const lines = await allLines(d, s.id);
  assert.deepEqual(
    lines.map((l) => [l.stream, l.text]).sort(),
    [
      ['stderr', 'problem'],
      ['stdout', 'out'],
    ],
  );
});

test('the agent runs in the worktree with the config env, GROVE_* and the ports', async (t) => {
  const { d, repo, task, project } = await readyTask(t, { grove: { env: { FOO: 'from config' }, ports: [3000] } });
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'env' } });
  await waitSessionEnd(d, r.json.id);
  const lines = (await allLines(d, r.json.id)).map((l) => l.text);
  const wt = path.join(repo, task.worktree_path).replace(/\/$/, '');
  const port = String(task.ports['3000']);
  for (const expected of [
    `cwd=${wt}`,
    'FOO=from config',
    `GROVE_TASK_ID=${task.id}`,
    `GROVE_PROJECT_ID=${project.id}`,
    `GROVE_PROJECT_PATH=${repo}`,
    `GROVE_BRANCH=${task.branch}`,
    `GROVE_WORKTREE=${wt}`,
    `GROVE_SESSION_ID=${r.json.id}`,
    `GROVE_PORT=${port}`,
    `GROVE_PORT_3000=${port}`,
    `PORT=${port}`,
  ]) {
    assert.ok(lines.includes(expected), `${expected} in ${JSON.stringify(lines)}`);
  }
});

test('an agent that ignores SIGTERM, with a background child: DELETE answers within 6 s and both are gone', async (t) => {
  const { d, task } = await readyTask(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'stubborn' } });
  const pid = r.json.pid;
  // Both the agent and its child have printed their pids: both run.
  await d.waitForLog((l) => l.msg === 'session running' && l.session === r.json.id);
  const seen = await readSse(`http://localhost/api/sessions/${r.json.id}/output`, {
    socketPath: d.socketPath,
    until: (evs) => evs.filter((e) => e.event === 'line').length >= 2,
  });
  assert.deepEqual(seen.map((e) => e.data.text.split(' ')[0]).sort(), ['child', 'parent']);
  assert.ok(liveGroupMembers(pid).length >= 3, 'wrapper, agent and child are running');
  const t0 = Date.now();
  const del = await d.tcp('DELETE', `/api/sessions/${r.json.id}`);
  const took = Date.now() - t0;
  assert.equal(del.status, 200, del.text);
  assert.deepEqual(del.json, { status: 'killed' });
  assert.ok(took < 6000, `answered in ${took} ms`);
  assert.ok(took >= 4900, `TERM was ignored, so KILL came after 5 s (${took} ms)`);
  assert.deepEqual(liveGroupMembers(pid), [], 'the whole group is gone');
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'killed');
  assert.ok(s.ended_at);
  // Killing again answers the same; a session that exited cannot be killed.
  assert.deepEqual((await d.socket('DELETE', `/api/sessions/${r.json.id}`)).json, { status: 'killed' });
  const done = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0' } });
  await waitSessionEnd(d, done.json.id);
  const refused = await d.socket('DELETE', `/api/sessions/${done.json.id}`);
  assert.equal(refused.status, 409);
  assert.equal(refused.json.code, 'SESSION_NOT_RUNNING');
});

test('a polite agent is killed by TERM at once', async (t) => {
  const { d, task } = await readyTask(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } });
  await d.waitForLog((l) => l.msg === 'session running' && l.session === r.json.id);
  const t0 = Date.now();
  assert.equal((await d.socket('DELETE', `/api/sessions/${r.json.id}`)).status, 200);
  assert.ok(Date.now() - t0 < 2000);
  assert.deepEqual(liveGroupMembers(r.json.pid), []);
});

test('archiving a task kills its live sessions', async (t) => {
  const { d, task } = await readyTask(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } });
  await d.waitForLog((l) => l.msg === 'session running' && l.session === r.json.id);
  const del = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(del.json.status, 'archived');
  assert.equal((await d.socket('GET', `/api/sessions/${r.json.id}`)).json.status, 'killed');
  assert.deepEqual(liveGroupMembers(r.json.pid), []);
  const again = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0' } });
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'TASK_NOT_READY');
});

test('GET /api/sessions: every session of every task in one answer, oldest first, or one project\'s; the same JSON as each task\'s list', async (t) => {
  const { d, task } = await readyTask(t);
  const other = await addProject(d, makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } }));
  const task2 = (await d.socket('POST', '/api/tasks', { body: { project_id: other.id, name: 'second' } })).json;
  const started = [];
  for (const [id, word] of [[task.id, 'one'], [task2.id, 'two'], [task.id, 'three']]) {
    const s = (await d.socket('POST', `/api/tasks/${id}/sessions`, { body: { prompt: `echo:${word}` } })).json;
    await waitSessionEnd(d, s.id);
    started.push(s.id);
  }
  const all = (await d.tcp('GET', '/api/sessions')).json;
  assert.deepEqual(all.map((s: any) => s.id), started);
  const perTask = [...(await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, ...(await d.socket('GET', `/api/tasks/${task2.id}/sessions`)).json];
  assert.deepEqual([...all].sort((a: any, b: any) => a.id.localeCompare(b.id)), perTask.sort((a: any, b: any) => a.id.localeCompare(b.id)));
  assert.deepEqual((await d.socket('GET', `/api/sessions?project_id=${other.id}`)).json.map((s: any) => s.id), [started[1]]);
  assert.deepEqual((await d.socket('GET', `/api/sessions?project_id=${crypto.randomUUID()}`)).json, []);
  assert.equal((await d.socket('GET', '/api/sessions?project_id=nope')).json.code, 'VALIDATION_FAILED');
  assert.equal((await d.socket('GET', '/api/sessions?task=x')).json.code, 'VALIDATION_FAILED');
});
