import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { branches, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { agentHome, allLines, gate, readyTask, waitSessionEnd } from '../helpers/sessions.ts';
import { waitPidGone } from '../helpers/state.ts';

// The daemon's session spawner: its child process running daemon/sessions/spawner.mjs.
function spawnerPid(d: TestDaemon): number {
  for (const line of execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (m && Number(m[2]) === d.proc.pid && m[3]!.includes('spawner.mjs')) return Number(m[1]);
  }
  throw new Error('no session spawner found');
}

async function endedSession(d: TestDaemon, id: string): Promise<any> {
  await waitSessionEnd(d, id);
  return (await d.socket('GET', `/api/sessions/${id}`)).json;
}

test('a killed session spawner: running sessions are followed to their end, new ones are spawned by the daemon, kill still works', async (t) => {
  const { d, task } = await readyTask(t);
  const g = gate(t);
  const a = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { args: ['echo:one', `wait:${g.path}`, 'echo:two', 'exit:3'] } });
  assert.equal(a.status, 201, a.text);
  await d.waitForLog((l) => l.msg === 'session running' && l.session === a.json.id);

  const spawner = spawnerPid(d);
  process.kill(spawner, 'SIGKILL');
  await d.waitForLog((l) => l.msg === 'the session spawner exited; the daemon spawns sessions itself');

  const b = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { args: ['echo:b', 'exit:4'] } });
  assert.equal(b.status, 201, b.text);
  const bEnd = await endedSession(d, b.json.id);
  assert.equal(bEnd.status, 'failed'); // a non-zero exit
  assert.equal(bEnd.exit_code, 4);
  assert.deepEqual((await allLines(d, b.json.id)).map((l) => l.text), ['b']);

  // The first session's parent is gone: its end is found by watching its pid.
  g.release();
  const aEnd = await endedSession(d, a.json.id);
  assert.equal(aEnd.status, 'failed');
  assert.equal(aEnd.exit_code, 3);
  assert.deepEqual((await allLines(d, a.json.id)).map((l) => l.text), ['one', 'two']);

  const c = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { args: ['sleep:1000'] } });
  assert.equal(c.status, 201, c.text);
  const k = await d.socket('DELETE', `/api/sessions/${c.json.id}`);
  assert.equal(k.status, 200, k.text);
  assert.equal((await d.socket('GET', `/api/sessions/${c.json.id}`)).json.status, 'killed');
});

test('the session spawner goes with the daemon, on a clean stop and on SIGKILL', async (t) => {
  const home = agentHome(t);
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const d = await startDaemon(t, { home });
    const spawner = spawnerPid(d);
    assert.equal(await d.stop(signal), signal === 'SIGTERM' ? 0 : 'SIGKILL');
    await waitPidGone(spawner, 5000);
  }
});

test('a start the spawner never answered (it was stopped, then killed) is made by the daemon itself', async (t) => {
  const { d, task } = await readyTask(t);
  const spawner = spawnerPid(d);
  process.kill(spawner, 'SIGSTOP');
  t.after(() => {
    try {
      process.kill(spawner, 'SIGKILL');
    } catch {
      // gone already
    }
  });
  const posting = d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { args: ['echo:late', 'exit:0'] } });
  // The request waits in the stopped spawner's channel.
  await d.waitForLog((l) => l.msg === 'session spawn sent to the spawner');
  let answered = false;
  void posting.then(() => (answered = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(answered, false, 'held up by the stopped spawner');
  process.kill(spawner, 'SIGKILL');
  const r = await posting;
  assert.equal(r.status, 201, r.text);
  const end = await endedSession(d, r.json.id);
  assert.equal(end.status, 'exited');
  assert.deepEqual((await allLines(d, r.json.id)).map((l) => l.text), ['late']);
});

test("the worktree threads' git runs from the spawner; killed mid-`git worktree add`, the creation is undone once git has ended (503), and git then runs from the daemon", async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const fifos = makeTempDir(t);
  const started = path.join(fifos, 'started');
  const release = path.join(fifos, 'release');
  execFileSync('mkfifo', [started, release]);
  // Reports the pid of git's parent, then holds `git worktree add` open until released.
  const hook = path.join(repo, '.git', 'hooks', 'post-checkout');
  writeFileSync(hook, `#!/bin/sh\nps -o ppid= -p $PPID > '${started}'\nread x < '${release}'\nexit 0\n`);
  chmodSync(hook, 0o755);
  const project = await addProject(d, repo);
  const before = branches(repo);

  const posting = d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'one' } });
  const gitParent = Number((await readFile(started, 'utf8')).trim());
  const spawner = spawnerPid(d);
  assert.equal(gitParent, spawner, 'git was started by the spawner');

  process.kill(spawner, 'SIGKILL');
  await d.waitForLog((l) => l.msg === 'the session spawner exited; the daemon spawns sessions itself');
  await writeFile(release, 'go\n'); // git, orphaned but alive, finishes its worktree now
  const r = await posting;
  assert.equal(r.status, 503, r.text);
  assert.equal(r.json.code, 'UNAVAILABLE');
  // What the orphaned git made is taken back: no branch, no worktree, no folder, no task.
  assert.deepEqual(branches(repo), before);
  assert.deepEqual(worktrees(repo), [repo]);
  assert.equal(existsSync(path.join(repo, '.grove', 'worktrees', 'one')), false);
  assert.deepEqual((await d.socket('GET', `/api/tasks?project_id=${project.id}`)).json, []);

  // Without the spawner, the threads run git themselves.
  rmSync(hook);
  const two = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'two' } });
  assert.equal(two.status, 201, two.text);
  assert.deepEqual(branches(repo), [...before, 'grove/two'].sort());
  const archived = await d.socket('DELETE', `/api/tasks/${two.json.id}`);
  assert.equal(archived.status, 200, archived.text);
  assert.equal(existsSync(path.join(repo, '.grove', 'worktrees', 'two')), false);
});
