// Smoke test for another Node version (CI runs it on Node 24 LTS, beside the full suite on the
// machine's Node): the built daemon on a new store, the seed's flow through the CLI, and the API
// over the socket and the TCP front, all on the Node that runs this file (process.execPath).
// GROVE_EXPECT_NODE_MAJOR=24 makes sure that Node is the one meant.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT, startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { agentHome } from '../helpers/sessions.ts';

const execFileP = promisify(execFile);
const GROVE = path.join(ROOT, 'bin', 'grove.js');

// `grove args…` on this Node; a non-zero exit throws with the command's stderr.
async function grove(home: string, args: string[]): Promise<string> {
  const { stdout } = await execFileP(process.execPath, [GROVE, ...args], { cwd: ROOT, env: { ...process.env, GROVE_HOME: home } });
  return stdout;
}

const groveJson = async (home: string, args: string[]) => JSON.parse(await grove(home, ['--json', ...args]));

test(`the seed's flow on Node ${process.version}: daemon, CLI, API over the socket and the TCP front`, async (t) => {
  const major = process.env.GROVE_EXPECT_NODE_MAJOR;
  if (major) assert.ok(process.version.startsWith(`v${major}.`), `expected Node ${major}, running ${process.version}`);

  // A new store: the daemon makes it itself (a copy of the prepared one), on this Node.
  const home = agentHome(t);
  const d = await startDaemon(t, { home, noSeed: true });
  if (process.platform === 'linux') assert.equal(readlinkSync(`/proc/${d.proc.pid}/exe`), realpathSync(process.execPath));

  const before = await groveJson(home, ['status']);
  assert.equal(before.pid, d.proc.pid);
  assert.equal(before.projects, 0);
  assert.match(await grove(home, ['status']), new RegExp(`running, pid ${d.proc.pid}, up `));

  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture', setup: ['echo prepared'] }) } });
  const project = await groveJson(home, ['project', 'add', repo, '--name', 'smoke']);
  assert.equal(project.path, repo);
  const task = await groveJson(home, ['task', 'new', 'smoke', 'Smoke it']);
  assert.equal(task.status, 'ready');
  assert.equal(task.branch, 'grove/smoke-it');
  const worktree = path.join(repo, task.worktree_path);
  assert.ok(existsSync(worktree));

  const session = await groveJson(home, ['session', 'start', task.id, '--prompt', 'exit:0', '--', 'echo:hello', 'err:warn']);
  assert.equal(session.status, 'starting');
  // Followed through the event stream to the session's end, then read again as pages.
  const followed = (await grove(home, ['logs', session.id, '-f', '--json'])).trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(followed.map((l) => l.text).sort(), ['hello', 'warn']);
  assert.deepEqual((await grove(home, ['logs', session.id.slice(0, 8)])).trim().split('\n').sort(), ['hello', 'warn']);
  const sessions = await groveJson(home, ['session', 'ls', task.id]);
  assert.deepEqual(sessions.map((s: any) => [s.id, s.status, s.exit_code]), [[session.id, 'exited', 0]]);

  for (const via of [d.socket, d.tcp]) {
    const health = await via('GET', '/api/health');
    assert.equal(health.status, 200);
    assert.equal(health.json.pid, d.proc.pid);
    const projects = await via('GET', '/api/projects');
    assert.deepEqual(projects.json.map((p: any) => p.id), [project.id]);
    const tasks = await via('GET', '/api/tasks');
    assert.deepEqual(tasks.json.map((x: any) => [x.id, x.status]), [[task.id, 'ready']]);
  }

  const removed = await groveJson(home, ['task', 'rm', task.id]);
  assert.equal(removed.status, 'archived');
  assert.ok(!existsSync(worktree));
  assert.equal((await d.tcp('GET', `/api/tasks/${task.id}`)).json.status, 'archived');
  const after = await groveJson(home, ['status']);
  assert.equal(after.projects, 1);
  assert.equal(after.tasks, 0);

  assert.equal(await d.stop(), 0);
});
