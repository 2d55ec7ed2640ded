import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { addProject, ROOT, sharedDaemon, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { agentHome, gate, waitSessionEnd } from '../helpers/sessions.ts';

// Take-over (DESIGN §15) through the API, with a stand-in for the client: any process of ours
// whose pid the takeover names (grove takeover itself is driven in test/cli/takeover.test.ts).
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const INTERACTIVE = path.join(ROOT, 'test', 'fixtures', 'interactive-agent.sh');
const MODES = { read: [], edit: [] };
const AGENTS = {
  talk: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], interactive: [INTERACTIVE, '--resume', '{session}'], format: 'claude', modes: MODES, env: { FOO: 'agent' } },
  // continues conversations headless only
  headless: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], format: 'claude', modes: MODES },
  // never prints a session id
  mute: { command: [STREAM, '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], interactive: [INTERACTIVE, '--resume', '{session}'], session_id_field: 'nothing', modes: MODES },
};
const GROVE_JSON = { agent: 'talk', ports: [3000], env: { HOME_MARK: 'project' }, services: { web: { command: 'sleep 30' } } };
const home = (c: { after(fn: () => unknown): void }) => agentHome(c, { agents: AGENTS });
const daemon = sharedDaemon((c) => ({ home: home(c) }));

async function readyTask(d: TestDaemon, t: TestContext) {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(GROVE_JSON) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'take over' } })).json;
  assert.equal(task.status, 'ready');
  return { repo, project, task, worktree: path.join(repo, task.worktree_path).replace(/\/$/, '') };
}

// A finished first turn of agent `agent` on the task: the conversation to take over.
async function firstTurn(d: TestDaemon, taskId: string, agent = 'talk') {
  const r = await d.socket('POST', `/api/tasks/${taskId}/sessions`, { body: { agent, prompt: 'hello', mode: 'read' } });
  assert.equal(r.status, 201, r.text);
  const s = r.json;
  await waitSessionEnd(d, s.id);
  return (await d.socket('GET', `/api/sessions/${s.id}`)).json;
}

// A stand-in client process: runs until the test kills it (or its end).
function client(t: TestContext): ChildProcess {
  const p = spawn('sleep', ['300'], { stdio: 'ignore' });
  t.after(() => p.kill('SIGKILL'));
  return p;
}

const interactiveEnded = (d: TestDaemon, id: string) => d.waitForLog((l) => l.msg === 'interactive session ended' && l.session === id, 30_000);

test('takeover: an interactive session in the conversation, running, with the command, worktree and task variables to run; its end by exit code; say continues the same agent id', async (t) => {
  const d = await daemon();
  const { task, worktree } = await readyTask(d, t);
  const first = await firstTurn(d, task.id);
  const agentId = first.agent_session_id;
  assert.match(agentId, /^[0-9a-f-]{36}$/);
  const c = client(t);

  const r = await d.socket('POST', `/api/sessions/${first.id}/takeover`, { body: { pid: c.pid, args: ['--model', 'x'] } });
  assert.equal(r.status, 201, r.text);
  const { session, command, cwd, env } = r.json;
  assert.equal(session.kind, 'interactive');
  assert.equal(session.status, 'running');
  assert.equal(session.pid, c.pid);
  assert.equal(session.conversation_id, first.conversation_id);
  assert.equal(session.parent_id, first.id);
  assert.equal(session.agent, 'talk');
  assert.equal(session.mode, 'read', "the conversation's mode, for the follow-ups after it");
  assert.equal(session.agent_session_id, agentId, 'the agent session it resumes');
  assert.equal(session.prompt, null);
  assert.deepEqual(command, [INTERACTIVE, '--resume', agentId, '--model', 'x']);
  assert.deepEqual(session.command, command);
  assert.equal(cwd, worktree);
  assert.equal(env.GROVE_TASK_ID, task.id);
  assert.equal(env.GROVE_SESSION_ID, session.id);
  assert.equal(env.GROVE_AGENT, 'talk');
  assert.equal(env.GROVE_WORKTREE, worktree);
  assert.equal(env.GROVE_PORT_3000, String(task.ports['3000']));
  assert.equal(env.PORT, String(task.ports['3000']));
  assert.equal(env.HOME_MARK, 'project');
  assert.equal(env.FOO, 'agent');
  assert.equal(env.PATH, undefined, "the daemon's own environment stays out: the client's terminal has its own");

  // While it runs: another take-over is refused, a follow-up waits its turn.
  const again = await d.socket('POST', `/api/sessions/${first.id}/takeover`, { body: { pid: c.pid } });
  assert.equal(again.status, 409, again.text);
  assert.equal(again.json.code, 'SESSION_RUNNING');
  const queued = await d.socket('POST', `/api/sessions/${session.id}/messages`, { body: { prompt: 'after the person' } });
  assert.equal(queued.status, 202, queued.text);
  assert.equal(queued.json.status, 'queued');
  // Nothing is captured of it: no lines, and its stream ends with it.
  assert.deepEqual((await d.socket('GET', `/api/sessions/${session.id}/output`)).json, { lines: [], next: 0 });
  const listed = (await d.socket('GET', `/api/tasks/${task.id}/sessions?conversation_id=${first.conversation_id}`)).json;
  assert.deepEqual(listed.map((s: any) => s.kind), ['agent', 'interactive', 'agent']);

  const ended = await d.socket('POST', `/api/sessions/${session.id}/end`, { body: { exit_code: 0 } });
  assert.equal(ended.status, 200, ended.text);
  assert.equal(ended.json.status, 'exited');
  assert.equal(ended.json.exit_code, 0);
  const twice = await d.socket('POST', `/api/sessions/${session.id}/end`, { body: { exit_code: 0 } });
  assert.equal(twice.json.code, 'SESSION_NOT_RUNNING');

  // The queued follow-up starts once it ended, resuming the same agent session.
  await waitSessionEnd(d, queued.json.id);
  const next = (await d.socket('GET', `/api/sessions/${queued.json.id}`)).json;
  assert.equal(next.status, 'exited');
  assert.deepEqual(next.command, [STREAM, '--resume', agentId, '--', 'after the person']);
  assert.equal(next.parent_id, session.id);

  // Events carry the kind: created running, then its end.
  const events = (await d.socket('GET', '/api/events?after=0&limit=5000')).json.events.filter((e: any) => e.session_id === session.id);
  assert.deepEqual(
    events.map((e: any) => [e.type, e.data.kind, e.data.status]),
    [
      ['session.created', 'interactive', 'running'],
      ['session.status', 'interactive', 'exited'],
    ],
  );
});

test('takeover refusals: a running agent turn (409 SESSION_RUNNING), no interactive resume or a service (422 TAKEOVER_UNSUPPORTED), no agent id (409 RESUME_UNAVAILABLE), a pid that runs nothing (400); none leaves a session', async (t) => {
  const d = await daemon();
  const { task } = await readyTask(d, t);
  const c = client(t);
  const count = async () => (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json.length;

  const g = gate(t);
  const running = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `wait:${g.path}` } })).json;
  const busy = await d.socket('POST', `/api/sessions/${running.id}/takeover`, { body: { pid: c.pid } });
  assert.equal(busy.status, 409, busy.text);
  assert.equal(busy.json.code, 'SESSION_RUNNING');
  assert.match(busy.json.detail, new RegExp(running.id));
  g.release();
  await waitSessionEnd(d, running.id);

  const headless = await firstTurn(d, task.id, 'headless');
  const unsupported = await d.socket('POST', `/api/sessions/${headless.id}/takeover`, { body: { pid: c.pid } });
  assert.equal(unsupported.status, 422, unsupported.text);
  assert.equal(unsupported.json.code, 'TAKEOVER_UNSUPPORTED');
  assert.match(unsupported.json.detail, /headless has no interactive resume/);

  const web = (await d.socket('POST', `/api/tasks/${task.id}/services/web`)).json;
  const service = await d.socket('POST', `/api/sessions/${web.id}/takeover`, { body: { pid: c.pid } });
  assert.equal(service.json.code, 'TAKEOVER_UNSUPPORTED');
  // Only an interactive session's end is reported by a client.
  const notInteractive = await d.socket('POST', `/api/sessions/${web.id}/end`, { body: { exit_code: 0 } });
  assert.equal(notInteractive.status, 422, notInteractive.text);
  assert.equal(notInteractive.json.code, 'TAKEOVER_UNSUPPORTED');
  await d.socket('DELETE', `/api/sessions/${web.id}`);

  const mute = await firstTurn(d, task.id, 'mute');
  assert.equal(mute.agent_session_id, null);
  const unknown = await d.socket('POST', `/api/sessions/${mute.id}/takeover`, { body: { pid: c.pid } });
  assert.equal(unknown.status, 409, unknown.text);
  assert.equal(unknown.json.code, 'RESUME_UNAVAILABLE');

  const first = await firstTurn(d, task.id);
  const gone = spawn('true');
  await new Promise((r) => gone.once('exit', r));
  const noClient = await d.socket('POST', `/api/sessions/${first.id}/takeover`, { body: { pid: gone.pid } });
  assert.equal(noClient.status, 400, noClient.text);
  assert.equal(noClient.json.code, 'VALIDATION_FAILED');
  assert.equal(noClient.json.errors[0].path, '/pid');
  const bad = await d.socket('POST', `/api/sessions/${first.id}/takeover`, { body: { pid: 'me' } });
  assert.equal(bad.json.code, 'VALIDATION_FAILED');
  const badEnd = await d.socket('POST', `/api/sessions/${first.id}/end`, { body: { exit_code: -1 } });
  assert.equal(badEnd.json.code, 'VALIDATION_FAILED');

  assert.equal(await count(), 5, 'the refusals made no session');
});

test('a client that dies without reporting ends its session (lost), and the conversation goes on; DELETE stops the client (killed)', async (t) => {
  const d = await daemon();
  const { task } = await readyTask(d, t);
  const first = await firstTurn(d, task.id);

  const dies = client(t);
  const s = (await d.socket('POST', `/api/sessions/${first.id}/takeover`, { body: { pid: dies.pid } })).json.session;
  const queued = (await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'then this' } })).json;
  const ended = interactiveEnded(d, s.id);
  dies.kill('SIGKILL');
  await ended;
  const lost = (await d.socket('GET', `/api/sessions/${s.id}`)).json;
  assert.equal(lost.status, 'lost');
  assert.equal(lost.exit_code, null);
  await waitSessionEnd(d, queued.id);
  assert.equal((await d.socket('GET', `/api/sessions/${queued.id}`)).json.status, 'exited', 'the follow-up ran after it');

  const stopped = client(t);
  const exited = new Promise((r) => stopped.once('exit', (_code, signal) => r(signal)));
  const k = (await d.socket('POST', `/api/sessions/${first.id}/takeover`, { body: { pid: stopped.pid } })).json.session;
  const del = await d.socket('DELETE', `/api/sessions/${k.id}`);
  assert.equal(del.status, 200, del.text);
  assert.deepEqual(del.json, { status: 'killed' });
  assert.equal(await exited, 'SIGTERM', 'the client got TERM');
  assert.equal((await d.socket('GET', `/api/sessions/${k.id}`)).json.status, 'killed');
  const late = await d.socket('POST', `/api/sessions/${k.id}/end`, { body: { exit_code: 143 } });
  assert.equal(late.json.code, 'SESSION_NOT_RUNNING', "the client's late report changes nothing");
});

test('across a restart: a client still running keeps its session running; one gone meanwhile ends it lost', async (t) => {
  const d = await startDaemon(t, { home: home(t) });
  const { task } = await readyTask(d, t);
  const a = await firstTurn(d, task.id);
  const b = await firstTurn(d, task.id);
  const stays = client(t);
  const goes = client(t);
  const kept = (await d.socket('POST', `/api/sessions/${a.id}/takeover`, { body: { pid: stays.pid } })).json.session;
  const left = (await d.socket('POST', `/api/sessions/${b.id}/takeover`, { body: { pid: goes.pid } })).json.session;
  await d.stop();
  const gone = new Promise((r) => goes.once('exit', r));
  goes.kill('SIGKILL');
  await gone;

  const d2 = await startDaemon(t, { home: d.home });
  assert.equal((await d2.socket('GET', `/api/sessions/${left.id}`)).json.status, 'lost');
  assert.equal((await d2.socket('GET', `/api/sessions/${kept.id}`)).json.status, 'running');
  const ended = interactiveEnded(d2, kept.id);
  stays.kill('SIGKILL');
  await ended;
  assert.equal((await d2.socket('GET', `/api/sessions/${kept.id}`)).json.status, 'lost');
});
