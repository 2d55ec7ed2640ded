// The sessions' spawner (daemon/sessions/spawner.ts) alone: the wrappers it forks in its own small
// process, held until `go`, their exits told; what becomes of them when it goes (closed with the
// daemon, or killed); and, through the session service, a running session whose spawner was
// killed still ends in the store.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { after } from 'node:test';
import pino from 'pino';
import { createSpawner } from '../../daemon/sessions/spawner.ts';
import { sessionFiles } from '../../daemon/sessions/wrapper.ts';
import { processTable } from '../../daemon/proc/stat.ts';
import { makeTempDir } from '../helpers/git.ts';
import { AGENT, liveGroupMembers } from '../helpers/sessions.ts';
import { addTask, openTestStore, sessionService, until } from '../helpers/store.ts';

const s = await openTestStore(after);
const env = { PATH: process.env.PATH ?? '' };
const parentOf = (pid: number) => processTable().find((p) => p.pid === pid)?.ppid;
// A spawner closed when the test ends.
function newSpawner(t: test.TestContext) {
  const spawner = createSpawner({ log: pino({ level: 'silent' }) });
  t.after(() => spawner.close());
  return spawner;
}
const reap = (t: test.TestContext, pid: number) => t.after(() => liveGroupMembers(pid).forEach((p) => process.kill(p, 'SIGKILL')));

test('a wrapper forked by the spawner, not by this process: held until go, its exit told once it has written its status', async (t) => {
  const dir = makeTempDir(t);
  const spawner = newSpawner(t);
  const files = sessionFiles(dir, 'one');
  const marker = path.join(dir, 'ran');
  const s = await spawner.start({ files, command: ['sh', '-c', 'touch "$1"; echo out; exit 3', 'agent', marker], cwd: dir, env });
  assert.ok(s.ok);
  reap(t, s.pid);
  const spawnerPid = parentOf(s.pid);
  assert.ok(spawnerPid !== undefined && spawnerPid !== process.pid, `the wrapper's parent is the spawner (${spawnerPid}), not ${process.pid}`);
  assert.equal(processTable().find((p) => p.pid === spawnerPid)?.ppid, process.pid, 'the spawner is this process’s child');
  // held: nothing runs before the go
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(existsSync(marker), false);
  s.go();
  assert.equal(await s.exited, 'exited');
  assert.equal(readFileSync(files.exit, 'utf8'), '3\n');
  assert.equal(readFileSync(files.stdout, 'utf8'), 'out\n');

  // One spawner for every session.
  const two = await spawner.start({ files: sessionFiles(dir, 'two'), command: ['true'], cwd: dir, env });
  assert.ok(two.ok);
  assert.equal(parentOf(two.pid), spawnerPid);
  two.go();
  assert.equal(await two.exited, 'exited');
});

test('a start that cannot run (its folder gone) is data; a session folder that cannot be made throws', async (t) => {
  const dir = makeTempDir(t);
  const spawner = newSpawner(t);
  const gone = await spawner.start({ files: sessionFiles(dir, 'a'), command: ['true'], cwd: path.join(dir, 'nowhere'), env });
  assert.equal(gone.ok, false);
  assert.match(!gone.ok ? gone.message : '', /nowhere|ENOENT/);
  await assert.rejects(spawner.start({ files: sessionFiles(path.join(AGENT, 'not-a-folder'), 'b'), command: ['true'], cwd: dir, env }), /ENOTDIR|EEXIST|not a directory/);
});

test('closed with the daemon: a held wrapper runs nothing, a running one goes on, its end no longer told', async (t) => {
  const dir = makeTempDir(t);
  const spawner = createSpawner({ log: pino({ level: 'silent' }) });
  const marker = path.join(dir, 'held-ran');
  const held = await spawner.start({ files: sessionFiles(dir, 'held'), command: ['touch', marker], cwd: dir, env });
  const running = await spawner.start({ files: sessionFiles(dir, 'running'), command: [AGENT, 'sleep:300'], cwd: dir, env });
  assert.ok(held.ok && running.ok);
  reap(t, running.pid);
  running.go(); // sent just before the close: still done
  await spawner.close();
  await spawner.close(); // idempotent
  assert.equal(await held.exited, 'untracked');
  assert.equal(await running.exited, 'untracked');
  await until(async () => liveGroupMembers(held.pid).length === 0, 'the held wrapper gone');
  assert.equal(existsSync(marker), false, 'the held agent never ran');
  assert.ok(liveGroupMembers(running.pid).length >= 2, 'the running session (its wrapper and agent) goes on');
  assert.deepEqual(await spawner.start({ files: sessionFiles(dir, 'late'), command: ['true'], cwd: dir, env }), { ok: false, message: 'the daemon is stopping' });
});

test('a spawner killed: its sessions are untracked, the next start forks a new one', async (t) => {
  const dir = makeTempDir(t);
  const spawner = newSpawner(t);
  const first = await spawner.start({ files: sessionFiles(dir, 'first'), command: [AGENT, 'sleep:300'], cwd: dir, env });
  assert.ok(first.ok);
  reap(t, first.pid);
  first.go();
  const old = parentOf(first.pid)!;
  process.kill(old, 'SIGKILL');
  assert.equal(await first.exited, 'untracked');
  const next = await spawner.start({ files: sessionFiles(dir, 'next'), command: ['true'], cwd: dir, env });
  assert.ok(next.ok);
  assert.notEqual(parentOf(next.pid), old);
  next.go();
  assert.equal(await next.exited, 'exited');
});

// Through the session service as the daemon wires it: the end of a session whose exit nobody
// tells any more is found by its pid (live.watch), as after a re-attach.
test('the session service: a running session whose spawner was killed ends in the store when its agent ends', async (t) => {
  const service = sessionService(t, s, { agents: { fixture: { command: [AGENT, '{prompt}'] } } });
  const task = await addTask(t, s);
  const dir = makeTempDir(t);
  const release = path.join(dir, 'release');
  execFileSync('mkfifo', [release]);
  const session = await service.create(task.id, { agent: 'fixture', args: [`wait:${release}`, 'echo:after'] });
  reap(t, session.pid!);
  await until(async () => (await service.get(session.id)).status === 'running', 'running');
  process.kill(parentOf(session.pid!)!, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await service.get(session.id)).status, 'running', 'still running: only its spawner died');
  writeFileSync(release, 'go\n'); // the agent is reading it
  await until(async () => (await service.get(session.id)).status === 'exited', 'its end stored', 10_000);
  assert.deepEqual((await service.lines(session.id, 0, 10)).lines.map((l) => l.text), ['after']);
});
