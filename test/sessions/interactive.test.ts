// Take-over (daemon/sessions/interactive.ts, DESIGN §15) alone: the session service as the daemon
// wires it on a real store, the client a real process of ours whose pid the takeover names.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import type { Task } from '../../schemas/task.ts';
import { waitPidGone } from '../helpers/state.ts';
import { addTask, memoryLog, openTestStore, sessionService, TEST_HOST_ID, until } from '../helpers/store.ts';

const s = await openTestStore(after);
const agents = {
  talk: { command: ['true'], resume: ['true', '{session}'], interactive: ['talk-cli', '--resume', '{session}'], env: { FOO: 'agent' } },
  headless: { command: ['true'], resume: ['true', '{session}'] },
};
const AGENT_ID = 'conv-7f3a';

// A stand-in client: runs until the test kills it.
function client(t: TestContext): ChildProcess & { pid: number } {
  const p = spawn('sleep', ['300'], { stdio: 'ignore' });
  t.after(() => p.kill('SIGKILL'));
  return p as ChildProcess & { pid: number };
}

// A first turn of `agent` on the task, ended, that printed its agent's session id (or none).
async function firstTurn(task: Task, agent = 'talk', agentSessionId: string | null = AGENT_ID, kind: 'agent' | 'service' = 'agent') {
  const id = randomUUID();
  await s.sessions.insert(
    { id, task_id: task.id, agent, command: ['true'], mode: 'read', prompt: 'hello', conversation_id: id, parent_id: null, agent_session_id: agentSessionId, kind },
    'running',
  );
  await s.sessions.end(id, 'exited', 0);
  return id;
}

const code = (c: string) => (err: any) => {
  assert.equal(err.code, c, err.message);
  return true;
};

test('takeover records a running interactive session of the client’s pid, with the command, worktree and task variables; the client’s exit code ends it once', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const parent = await firstTurn(task);
  const c = client(t);

  const taken = await service.takeover(parent, { pid: c.pid, args: ['--model', 'x'] });
  assert.deepEqual(taken.command, ['talk-cli', '--resume', AGENT_ID, '--model', 'x'], 'the agent’s interactive command, then the args');
  const project = await s.getProject(task.project_id);
  assert.equal(taken.cwd, path.join(project.path, task.worktree_path).replace(/\/$/, ''));
  assert.equal(taken.env.FOO, 'agent', 'the agent’s own variables');
  assert.deepEqual([taken.env.GROVE_AGENT, taken.env.GROVE_SESSION_ID, taken.env.GROVE_TASK_ID], ['talk', taken.session.id, task.id]);
  assert.equal(taken.env.PATH, undefined, 'the task’s variables only: the client keeps its own environment');
  const rec = await service.get(taken.session.id);
  assert.deepEqual(
    [rec.kind, rec.status, rec.pid, rec.conversation_id, rec.parent_id, rec.agent_session_id, rec.prompt, rec.mode],
    ['interactive', 'running', c.pid, parent, parent, AGENT_ID, null, 'read'],
  );

  const ended = await service.endInteractive(taken.session.id, { exit_code: 0 });
  assert.deepEqual([ended.status, ended.exit_code], ['exited', 0]);
  await assert.rejects(service.endInteractive(taken.session.id, { exit_code: 1 }), code('SESSION_NOT_RUNNING'));
  assert.equal((await service.get(taken.session.id)).status, 'exited', 'a second report changes nothing');

  // The next take-over continues after the interactive one, from the same agent id.
  const again = await service.takeover(taken.session.id, { pid: c.pid });
  assert.equal((await service.get(again.session.id)).parent_id, taken.session.id);
  const failed = await service.endInteractive(again.session.id, { exit_code: 3 });
  assert.deepEqual([failed.status, failed.exit_code], ['failed', 3], 'a non-zero exit is a failure');
});

test('takeover refuses what cannot be taken over, each with its code, and records nothing', async (t) => {
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const c = client(t);
  const before = async () => (await service.list(task.id)).length;

  await assert.rejects(service.takeover(await firstTurn(task, 'headless'), { pid: c.pid }), code('TAKEOVER_UNSUPPORTED'), 'an agent with no interactive resume');
  await assert.rejects(service.takeover(await firstTurn(task, 'talk', AGENT_ID, 'service'), { pid: c.pid }), code('TAKEOVER_UNSUPPORTED'), 'a service');
  await assert.rejects(service.takeover(await firstTurn(task, 'talk', null), { pid: c.pid }), code('RESUME_UNAVAILABLE'), 'no agent session id printed');
  await assert.rejects(service.takeover(randomUUID(), { pid: c.pid }), code('NOT_FOUND'));

  const parent = await firstTurn(task);
  const dead = spawn('true');
  await waitPidGone(dead.pid!);
  await assert.rejects(service.takeover(parent, { pid: dead.pid! }), (err: any) => err.code === 'VALIDATION_FAILED' && err.errors[0].path === '/pid');

  const n = await before();
  const first = await service.takeover(parent, { pid: c.pid });
  await assert.rejects(service.takeover(parent, { pid: c.pid }), code('SESSION_RUNNING'), 'the conversation is busy with the first take-over');
  assert.equal(await before(), n + 1, 'only the first take-over was recorded');
  await assert.rejects(service.endInteractive(parent, { exit_code: 0 }), code('TAKEOVER_UNSUPPORTED'), 'grove records an agent session’s end itself');
  await service.endInteractive(first.session.id, { exit_code: 0 });
});

test('a client gone without reporting ends its session lost; a kill stops the client and records killed, and a late report is refused', async (t) => {
  const { log, records } = memoryLog();
  const service = sessionService(t, s, { agents, log });
  const task = await addTask(t, s);
  const parent = await firstTurn(task);

  const vanishing = client(t);
  const taken = await service.takeover(parent, { pid: vanishing.pid });
  vanishing.kill('SIGKILL');
  const lost = await until(async () => ((await service.get(taken.session.id)).status === 'lost' ? service.get(taken.session.id) : null), 'lost');
  assert.equal(lost.exit_code, null);
  assert.ok(records.some((r) => r.msg === 'the client of an interactive session is gone without reporting its end' && r.session === taken.session.id));

  const killed = client(t);
  const exited = new Promise<NodeJS.Signals | null>((resolve) => killed.once('exit', (_c, sig) => resolve(sig)));
  const second = await service.takeover(taken.session.id, { pid: killed.pid });
  assert.deepEqual(await service.kill(second.session.id), { status: 'killed' });
  assert.equal(await exited, 'SIGTERM', 'the client is told to stop (it passes it on to the agent)');
  assert.equal((await service.get(second.session.id)).status, 'killed');
  await assert.rejects(service.endInteractive(second.session.id, { exit_code: 0 }), code('SESSION_NOT_RUNNING'));
});

test('after a restart, an interactive session whose client still runs is watched again; one whose client is gone ends lost', async (t) => {
  const first = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const other = await addTask(t, s);
  const staying = client(t);
  const leaving = client(t);
  const a = await first.takeover(await firstTurn(task), { pid: staying.pid });
  const b = await first.takeover(await firstTurn(other), { pid: leaving.pid });
  await first.close();
  leaving.kill('SIGKILL');
  await waitPidGone(leaving.pid);

  const second = sessionService(t, s, { agents });
  await second.reattach(TEST_HOST_ID);
  assert.equal((await second.get(b.session.id)).status, 'lost', 'gone while no daemon watched');
  assert.equal((await second.get(a.session.id)).status, 'running');
  staying.kill('SIGKILL');
  await until(async () => (await second.get(a.session.id)).status === 'lost', 'the watched client’s end noticed');
});
