import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { addProject, makeHome, ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { allLines, liveGroupMembers, readSse, waitSessionEnd } from '../helpers/sessions.ts';

// A dev server on the task's port that prints a numbered tick every 20 ms (see the file).
const WEB = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');
const grove = (extra: object = {}) => ({ ports: [3000], services: { web: { command: `exec node ${WEB}` }, ...extra } });

// The service's HTTP answer on `port`, once it listens.
async function ask(port: number): Promise<any> {
  for (let i = 0; ; i++) {
    try {
      const res = await request(`http://127.0.0.1:${port}/hello`);
      return await res.body.json();
    } catch (err) {
      if (i > 200) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

async function newTask(d: TestDaemon, projectId: string, name: string) {
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, name } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

test('services: a real HTTP server on each task\'s port, two at once; a second start is 409; listed with their sessions, told apart by kind', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(grove({ idle: { command: 'sleep 300' } })) } });
  const project = await addProject(d, repo);
  const a = await newTask(d, project.id, 'alpha');
  const b = await newTask(d, project.id, 'beta');
  assert.notEqual(a.ports['3000'], b.ports['3000']);

  const sa = await d.socket('POST', `/api/tasks/${a.id}/services/web`);
  assert.equal(sa.status, 201, sa.text);
  assert.equal(sa.json.kind, 'service');
  assert.equal(sa.json.agent, 'web');
  assert.deepEqual(sa.json.command, ['sh', '-c', `exec node ${WEB}`]);
  const sb = await d.tcp('POST', `/api/tasks/${b.id}/services/web`);
  assert.equal(sb.status, 201, sb.text);
  t.after(() => [sa.json.pid, sb.json.pid].forEach((pid) => liveGroupMembers(pid).forEach((p) => process.kill(p, 'SIGKILL'))));

  const ra = await ask(a.ports['3000']);
  assert.deepEqual([ra.task, ra.service, ra.port], ['alpha', 'web', a.ports['3000']], 'with the task environment and its own port');
  assert.equal((await ask(b.ports['3000'])).task, 'beta');

  const again = await d.socket('POST', `/api/tasks/${a.id}/services/web`);
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'SERVICE_RUNNING');
  assert.equal((await d.socket('POST', `/api/tasks/${a.id}/services/nope`)).status, 404);
  assert.equal((await d.socket('POST', `/api/tasks/${a.id}/services/${'x'.repeat(300)}`)).status, 404);

  const list = (await d.socket('GET', `/api/tasks/${a.id}/services`)).json;
  assert.deepEqual(list.map((s: any) => [s.name, s.command, s.autostart, s.session?.id ?? null]), [
    ['web', `exec node ${WEB}`, false, sa.json.id],
    ['idle', 'sleep 300', false, null],
  ]);
  const sessions = (await d.socket('GET', `/api/tasks/${a.id}/sessions`)).json;
  assert.deepEqual(sessions.map((s: any) => s.kind), ['service']);
  // A service has no conversation to continue.
  assert.equal((await d.socket('POST', `/api/sessions/${sa.json.id}/messages`, { body: { prompt: 'hi' } })).json.code, 'RESUME_UNSUPPORTED');

  // Stopped: killed, nothing of its group left, and it can start again.
  assert.deepEqual((await d.socket('DELETE', `/api/sessions/${sa.json.id}`)).json, { status: 'killed' });
  assert.deepEqual(liveGroupMembers(sa.json.pid), []);
  const restarted = await d.socket('POST', `/api/tasks/${a.id}/services/web`);
  assert.equal(restarted.status, 201);
  assert.notEqual((await ask(a.ports['3000'])).pid, ra.pid, 'a new server');
  await d.socket('DELETE', `/api/sessions/${restarted.json.id}`);

  // Archiving a task stops its services.
  assert.equal((await d.socket('DELETE', `/api/tasks/${b.id}`)).status, 200);
  assert.equal((await d.socket('GET', `/api/sessions/${sb.json.id}`)).json.status, 'killed');
  assert.deepEqual(liveGroupMembers(sb.json.pid), []);
});

test('services: autostart after setup; a service outlives a daemon SIGKILL and its output goes on with no line lost', async (t) => {
  const home = makeHome(t);
  const d = await startDaemon(t, { home });
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: ['echo prepared'], ports: [3000], services: { web: { command: `exec node ${WEB}`, autostart: true } } }) } });
  const project = await addProject(d, repo);
  const task = await newTask(d, project.id, 'kept alive');
  const port = task.ports['3000'];
  const first = await ask(port);
  const [svc] = (await d.socket('GET', `/api/tasks/${task.id}/services`)).json;
  assert.equal(svc.autostart, true);
  assert.equal(svc.session.status === 'running' || svc.session.status === 'starting', true);
  const id = svc.session.id;
  t.after(() => liveGroupMembers(svc.session.pid).forEach((p) => process.kill(p, 'SIGKILL')));
  await readSse(`http://localhost/api/sessions/${id}/output`, { socketPath: d.socketPath, until: (evs) => evs.length >= 10 });

  assert.equal(await d.stop('SIGKILL'), 'SIGKILL');
  assert.equal((await ask(port)).pid, first.pid, 'the service outlives the daemon');
  await new Promise((r) => setTimeout(r, 300)); // it prints while no daemon reads
  const d2 = await startDaemon(t, { home });
  await readSse(`http://localhost/api/sessions/${id}/output`, { socketPath: d2.socketPath, until: (evs) => evs.some((e) => e.data?.text === 'tick 60') });
  assert.deepEqual((await d2.socket('DELETE', `/api/sessions/${id}`)).json, { status: 'killed' });
  await waitSessionEnd(d2, id);
  assert.deepEqual(liveGroupMembers(svc.session.pid), []);
  const ticks = (await allLines(d2, id)).filter((l) => l.text.startsWith('tick ')).map((l) => Number(l.text.slice(5)));
  assert.ok(ticks.length >= 60);
  assert.deepEqual(ticks, ticks.map((_, i) => i + 1), 'every tick once, in order, across the restart');
});
