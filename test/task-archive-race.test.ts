import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, ROOT, startDaemon, type TestDaemon } from './helpers/daemon.ts';
import { makeRepo, makeTempDir } from './helpers/git.ts';
import { agentHome } from './helpers/sessions.ts';
import { processesWithEnv } from './helpers/state.ts';

const WEB = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');

// True when 127.0.0.1:port can be bound, i.e. nothing holds it.
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

async function waitFile(file: string): Promise<void> {
  for (let i = 0; !existsSync(file); i++) {
    assert.ok(i < 800, `${file} appeared`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// A daemon with the fixture agent and a project with a service on its port and the given teardown.
async function setup(t: test.TestContext, teardown: string[]) {
  const d = await startDaemon(t, { home: agentHome(t) });
  const grove = { agent: 'fixture', ports: [3000], services: { web: { command: `exec node ${WEB}` } }, teardown };
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(grove) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'racing' } })).json;
  assert.equal(task.status, 'ready');
  // Whatever a failing run leaves of the task is stopped.
  t.after(() => processesWithEnv(`GROVE_TASK_ID=${task.id}`).forEach((pid) => process.kill(pid, 'SIGKILL')));
  return { d, task, port: task.ports['3000'] as number };
}

// After the archive: every session of the task ended, no process with its environment, its port free.
async function nothingLeft(d: TestDaemon, task: any, port: number): Promise<void> {
  const sessions = (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json;
  assert.deepEqual(sessions.filter((s: any) => ['queued', 'starting', 'running'].includes(s.status)).map((s: any) => s.id), [], 'no session of the task is live');
  assert.deepEqual(processesWithEnv(`GROVE_TASK_ID=${task.id}`), [], 'no process of the task runs');
  assert.equal(await portFree(port), true, 'the port the archive released is free');
}

test('archive: while its teardown runs, a session, a service and a follow-up are refused 409 TASK_NOT_READY; nothing of the task is left after', async (t) => {
  const marks = makeTempDir(t);
  const started = path.join(marks, 'started');
  const release = path.join(marks, 'release');
  const { d, task, port } = await setup(t, [`touch ${started}; while [ ! -e ${release} ]; do sleep 0.05; done`]);
  const agent = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } });
  assert.equal(agent.status, 201, agent.text);
  const archiving = d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  await waitFile(started);

  const refused = [
    await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } }),
    await d.socket('POST', `/api/tasks/${task.id}/services/web`),
    await d.socket('POST', `/api/sessions/${agent.json.id}/messages`, { body: { prompt: 'sleep:300' } }),
  ];
  writeFileSync(release, '');
  const archived = await archiving;
  assert.equal(archived.status, 200, archived.text);
  assert.equal(archived.json.status, 'archived');
  assert.deepEqual(refused.map((r) => [r.status, r.json?.code]), [[409, 'TASK_NOT_READY'], [409, 'TASK_NOT_READY'], [409, 'TASK_NOT_READY']], refused.map((r) => r.text).join('\n'));
  await nothingLeft(d, task, port);
});

test('archive: starts fired while it begins either are killed by it or are refused; nothing of the task is left after', async (t) => {
  const { d, task, port } = await setup(t, ['sleep 0.3']);
  const archiving = d.socket('DELETE', `/api/tasks/${task.id}`);
  let done = false;
  void archiving.finally(() => (done = true));
  const answers: Array<{ status: number; json: any; text: string }> = [];
  // Starts keep coming, a few at a time, until the archive has answered.
  while (!done) {
    answers.push(
      ...(await Promise.all([
        d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } }),
        d.socket('POST', `/api/tasks/${task.id}/services/web`),
        d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } }),
      ])),
    );
  }
  const archived = await archiving;
  assert.equal(archived.json.status, 'archived', archived.text);
  for (const a of answers) {
    assert.ok(a.status === 201 || (a.status === 409 && ['TASK_NOT_READY', 'SERVICE_RUNNING'].includes(a.json.code)), a.text);
  }
  assert.ok(answers.some((a) => a.status === 409 && a.json.code === 'TASK_NOT_READY'), 'some starts came after the archive began');
  await nothingLeft(d, task, port);
});
