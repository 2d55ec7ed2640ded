import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, ROOT, sharedDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { branches, git, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { AGENT } from '../helpers/sessions.ts';
import { processesWithEnv } from '../helpers/state.ts';

// Tests that need no settings of their own share one daemon (each makes its own repository);
// those that start sessions of the fixture agent share another, which has it.
const daemon = sharedDaemon();
const withAgent = sharedDaemon({ config: { agents: { fixture: { command: [AGENT, '{prompt}'] } } } });

test('archiving keeps the branch and its commits, refuses dirty work without force, releases ports', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { 'a.txt': 'a\n', '.grove.json': JSON.stringify({ ports: [3000] }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'work' } })).json;
  const wt = path.join(repo, task.worktree_path);
  writeFileSync(path.join(wt, 'a.txt'), 'changed\n');
  git(wt, 'commit', '-q', '-am', 'work in progress');
  const commit = git(wt, 'rev-parse', 'HEAD');

  // Untracked file: dirty.
  writeFileSync(path.join(wt, 'new.txt'), 'x');
  let r = await d.tcp('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.code, 'WORKTREE_DIRTY');
  assert.match(r.json.detail, /new\.txt/);
  // Modified tracked file: dirty.
  rmSync(path.join(wt, 'new.txt'));
  writeFileSync(path.join(wt, 'a.txt'), 'uncommitted\n');
  r = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.json.code, 'WORKTREE_DIRTY');
  // Nothing changed by the refusals.
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'uncommitted\n');
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.status, 'ready');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}`)).json.ports, task.ports);

  r = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.status, 'archived');
  assert.deepEqual(r.json.ports, {});
  assert.match(r.json.archived_at, /Z$/);
  assert.ok(!existsSync(wt));
  assert.deepEqual(worktrees(repo), [repo]);
  assert.ok(branches(repo).includes(task.branch), 'branch kept');
  assert.equal(git(repo, 'rev-parse', task.branch), commit, 'commits kept');
  assert.equal(git(repo, 'status', '--porcelain'), '', 'main checkout clean');
  assert.equal(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n', 'main checkout untouched');

  // Archiving again answers the archived task.
  const again = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(again.status, 200);
  assert.deepEqual(again.json, r.json);
});

test('a clean worktree is archived without force', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'clean' } })).json;
  const r = await d.socket('DELETE', `/api/tasks/${task.id}`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(worktrees(repo), [repo]);
});

test('a worktree folder replaced by a symlink: the link goes, its target is untouched', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'linked' } })).json;
  const wt = path.join(repo, task.worktree_path).replace(/\/$/, '');
  // Someone else's files, with a dirty git work tree of their own.
  const elsewhere = makeRepo(t, { files: { 'precious.txt': 'keep me\n' } });
  writeFileSync(path.join(elsewhere, 'untracked.txt'), 'mine');
  rmSync(wt, { recursive: true, force: true });
  symlinkSync(elsewhere, wt);

  for (const force of ['', '?force=true']) {
    const r = await d.socket('DELETE', `/api/tasks/${task.id}${force}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'archived');
  }
  assert.ok(!existsSync(wt), 'the symlink is gone');
  assert.equal(readFileSync(path.join(elsewhere, 'precious.txt'), 'utf8'), 'keep me\n');
  assert.equal(readFileSync(path.join(elsewhere, 'untracked.txt'), 'utf8'), 'mine');
  assert.equal(git(elsewhere, 'status', '--porcelain'), '?? untracked.txt');
  assert.deepEqual(worktrees(repo), [repo]);
  assert.ok(branches(repo).includes(task.branch));
});

test('a symlinked .grove/worktrees folder is never followed', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'a' } })).json;
  const outside = makeTempDir(t);
  mkdirSync(path.join(outside, 'a'));
  writeFileSync(path.join(outside, 'a', 'file'), 'x');
  rmSync(path.join(repo, '.grove', 'worktrees'), { recursive: true, force: true });
  symlinkSync(outside, path.join(repo, '.grove', 'worktrees'));
  const r = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(r.status, 200, r.text);
  assert.equal(readFileSync(path.join(outside, 'a', 'file'), 'utf8'), 'x');
  // And no new worktree is made through it.
  const refused = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'b' } });
  assert.equal(refused.status, 422);
  assert.equal(refused.json.code, 'CONFIG_INVALID');
  assert.deepEqual(branches(repo), ['grove/a', 'main']);
});

test('a project with live tasks cannot be removed: 409 PROJECT_HAS_TASKS', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } })).json;
  const r = await d.socket('DELETE', `/api/projects/${project.id}`);
  assert.equal(r.status, 409);
  assert.equal(r.json.code, 'PROJECT_HAS_TASKS');
  assert.equal((await d.socket('GET', `/api/projects/${project.id}`)).status, 200);
  await d.socket('DELETE', `/api/tasks/${task.id}`);
  // Read once archived: the daemon keeps tasks it has read, and the removal must forget them.
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.status, 'archived');
  assert.equal((await d.socket('DELETE', `/api/projects/${project.id}`)).status, 204);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).status, 404, "archived tasks go with their project");
  assert.ok(branches(repo).includes(task.branch), 'the branch stays in the repository');
});

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

// The daemon with the fixture agent, and a project with a service on its port and the given teardown.
async function setup(t: test.TestContext, teardown: string[]) {
  const d = await withAgent();
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
