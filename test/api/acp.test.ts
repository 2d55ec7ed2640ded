// ACP agents (DESIGN §15) through `grove acp-bridge`, against a daemon: a user agent with
// `"protocol": "acp"` pointing at the fixture ACP agent (test/fixtures/acp-agent.mjs), whose
// permission requests and elicitations become approvals; allow, deny, rules, remember, expiry,
// kill, timeout_s, a daemon restart while pending, follow-ups that resume or load its session.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { ROOT, sharedDaemon, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempDir } from '../helpers/git.ts';
import { agentHome, allLines, liveGroupMembers, readyTaskOn, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'acp-agent.mjs');
const ACP_MODES = { read: 'default', edit: 'autoEdit', full: 'yolo' };

// The user config of these daemons: the fixture as an ACP agent (and one that can only load),
// confined (DESIGN §18) with its log's folder writable.
function acpConfig(dir: string) {
  return {
    agents: {
      acp: { protocol: 'acp', command: [process.execPath, FIXTURE], acp_modes: ACP_MODES, sandbox: { write: [dir] }, env: { ACP_FIXTURE_DIR: dir } },
      'acp-load': { protocol: 'acp', command: [process.execPath, FIXTURE], acp_modes: ACP_MODES, sandbox: { write: [dir] }, env: { ACP_FIXTURE_DIR: dir, ACP_FIXTURE_LOAD_ONLY: '1' } },
      'acp-config': { protocol: 'acp', command: [process.execPath, FIXTURE], acp_modes: ACP_MODES, sandbox: { write: [dir] }, env: { ACP_FIXTURE_DIR: dir, ACP_FIXTURE_CONFIG_MODES: '1' } },
      'acp-nomode': { protocol: 'acp', command: [process.execPath, FIXTURE], acp_modes: { edit: 'plan-only' }, sandbox: { write: [dir] }, env: { ACP_FIXTURE_DIR: dir, ACP_FIXTURE_CONFIG_MODES: '1' } },
      'acp-ghost': { protocol: 'acp', command: ['no-such-acp-agent', '--acp'] },
      'acp-unanswered': { protocol: 'acp', command: [process.execPath, FIXTURE], acp_modes: ACP_MODES, sandbox: { write: [dir] }, env: { ACP_FIXTURE_DIR: dir, ACP_FIXTURE_RESUME_UNANSWERED: '1' } },
    },
  };
}

let sharedDir = '';
const daemon = sharedDaemon((c) => {
  sharedDir = makeTempDir(c, 'grove-acp-');
  return { home: agentHome(c, acpConfig(sharedDir)) };
});

// What the fixture agent logged about one of its sessions.
function fixtureLog(dir: string, sessionId: string): any[] {
  const file = path.join(dir, 'log.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.sessionId === sessionId);
}

async function start(d: TestDaemon, taskId: string, body: Record<string, unknown>, t: TestContext) {
  const r = await d.socket('POST', `/api/tasks/${taskId}/sessions`, { body: { agent: 'acp', ...body } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  return r.json;
}

async function pendingOf(d: TestDaemon, sessionId: string): Promise<any> {
  return until(async () => (await d.socket('GET', `/api/approvals?session_id=${sessionId}&status=pending`)).json[0], 'a pending approval');
}

async function ended(d: TestDaemon, id: string): Promise<any> {
  await waitSessionEnd(d, id);
  return (await d.socket('GET', `/api/sessions/${id}`)).json;
}

const answer = (d: TestDaemon, a: any, body: Record<string, unknown>) => d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, ...body } });

test('allowed: the shell command the ACP agent asked about runs; the approval carries the command and the whole request; the result has the text, usage and cost', async (t) => {
  const d = await daemon();
  const { task, repo } = await readyTaskOn(d, t);
  const s = await start(d, task.id, { prompt: 'run: touch allowed.txt\nsay: done' }, t);
  assert.deepEqual(s.command.slice(1, 5), [path.join(ROOT, 'bin', 'grove.js'), 'acp-bridge', '--session', s.id]);
  assert.deepEqual(s.command.slice(5), ['--acp-mode', 'autoEdit', '--prompt=run: touch allowed.txt\nsay: done', '--', process.execPath, FIXTURE]);
  const a = await pendingOf(d, s.id);
  assert.equal(a.kind, 'tool');
  assert.equal(a.tool, 'Bash');
  assert.equal(a.input.command, 'touch allowed.txt');
  assert.equal(a.input.kind, 'execute');
  assert.deepEqual(a.input.raw_input, { command: 'touch allowed.txt' });
  assert.deepEqual(a.input.options.map((o: any) => o.kind), ['allow_once', 'allow_always', 'reject_once']);
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.waiting, 'approval');
  const worktree = path.join(repo, task.worktree_path);
  assert.equal(existsSync(path.join(worktree, 'allowed.txt')), false, 'nothing ran before the person answered');

  assert.equal((await answer(d, a, { decision: 'allow' })).status, 200);
  const done = await ended(d, s.id);
  assert.equal(done.status, 'exited');
  assert.equal(done.exit_code, 0);
  assert.ok(existsSync(path.join(worktree, 'allowed.txt')), 'allowed: it ran');
  assert.match(done.agent_session_id, /^[0-9a-f-]{36}$/);
  assert.deepEqual(
    { text: done.result.text, is_error: done.result.is_error, cost: done.result.cost_usd, input: done.result.input_tokens, output: done.result.output_tokens },
    { text: 'ran touch allowed.txt. done', is_error: false, cost: 0.25, input: 10, output: 5 },
  );
  const log = fixtureLog(sharedDir, done.agent_session_id);
  const seen = log.find((e) => e.toolCallId === a.key.split(':')[1]);
  assert.deepEqual(seen.outcome, { outcome: 'selected', optionId: 'proceed_once' }, 'allow picks allow once');
  assert.equal(a.key, `${done.agent_session_id}:call-0-0`, 'keyed by the agent session and the tool call');
  const init = readFileSync(path.join(sharedDir, 'log.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.event === 'initialize');
  assert.deepEqual([init.clientCapabilities.fs, init.clientCapabilities.terminal], [{ readTextFile: false, writeTextFile: false }, false], 'no file system or terminal offered');
  // Every update reached the session's output, then the result line.
  const lines = (await allLines(d, s.id)).filter((l) => l.stream === 'stdout').map((l) => JSON.parse(l.text));
  assert.ok(lines.some((l) => l.method === 'session/request_permission'));
  assert.ok(lines.some((l) => l.method === 'session/update' && l.params.update.sessionUpdate === 'tool_call_update'));
  assert.equal(lines.at(-1).type, 'result');
  assert.equal(lines.at(-1).stopReason, 'end_turn');
});

test('denied: the command does not run, the agent was answered reject once with grove\'s message; an edit asks in read', async (t) => {
  const d = await daemon();
  const { task, repo } = await readyTaskOn(d, t);
  const s = await start(d, task.id, { prompt: 'run: touch denied.txt\nedit: notes.md', mode: 'read' }, t);
  assert.ok(s.command.includes('default'), 'read sets the ACP mode default');
  const a = await pendingOf(d, s.id);
  assert.equal((await answer(d, a, { decision: 'deny', message: 'not that' })).status, 200);
  const e = await until(async () => (await d.socket('GET', `/api/approvals?session_id=${s.id}&status=pending`)).json.find((x: any) => x.id !== a.id), 'the edit asks');
  assert.equal(e.tool, 'Edit');
  assert.equal(e.input.file_path, path.join(repo, task.worktree_path, 'notes.md'));
  assert.equal(e.input.new_string, 'edited\n');
  assert.equal(e.input.content[0].type, 'diff');
  assert.equal((await answer(d, e, { decision: 'deny' })).status, 200);
  const done = await ended(d, s.id);
  assert.equal(done.exit_code, 0);
  assert.equal(existsSync(path.join(repo, task.worktree_path, 'denied.txt')), false, 'denied: it did not run');
  assert.equal(existsSync(path.join(repo, task.worktree_path, 'notes.md')), false);
  const seen = fixtureLog(sharedDir, done.agent_session_id).filter((x) => x.event === 'permission' && [a.key, e.key].some((k) => k.endsWith(`:${x.toolCallId}`)));
  assert.deepEqual(seen.map((x) => [x.outcome, x.meta]), [
    [{ outcome: 'selected', optionId: 'cancel' }, { grove: { message: 'not that' } }],
    [{ outcome: 'selected', optionId: 'cancel' }, { grove: { message: 'The user denied this.' } }],
  ]);
  assert.equal(done.result.text, 'not allowed to write notes.md. ', 'the text after the last tool call');
});

test('a .grove.json rule allows without asking; remember: session allows the same command again in that session', async (t) => {
  const d = await daemon();
  const { task, repo } = await readyTaskOn(d, t, { allow: ['Bash(touch ruled.txt)'] });
  const s = await start(d, task.id, { prompt: 'run: touch ruled.txt\nrun: touch again.txt\nrun: touch again.txt' }, t);
  const a = await pendingOf(d, s.id);
  assert.equal(a.input.command, 'touch again.txt', 'the rule let the first run without asking');
  assert.equal((await answer(d, a, { decision: 'allow', remember: 'session' })).status, 200);
  const done = await ended(d, s.id);
  assert.equal(done.exit_code, 0);
  const all = (await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json;
  assert.deepEqual(all.map((x: any) => [x.input.command, x.status]), [
    ['touch ruled.txt', 'allowed'],
    ['touch again.txt', 'allowed'],
    ['touch again.txt', 'allowed'],
  ]);
  assert.equal(all[0].reason, 'allowed by the rule Bash(touch ruled.txt)');
  assert.equal(all[2].reason, 'allowed by the rule Bash(touch again.txt)', 'remembered for the session');
  assert.ok(existsSync(path.join(repo, task.worktree_path, 'ruled.txt')));
  assert.ok(existsSync(path.join(repo, task.worktree_path, 'again.txt')));
});

test("the bridge is handed this daemon's socket over the one the project's environment names (a project's own grove): its approval reaches this daemon", async (t) => {
  const d = await daemon();
  const elsewhere = makeTempDir(t, 'grove-other-');
  const { task, repo } = await readyTaskOn(d, t, { env: { GROVE_SOCKET: path.join(elsewhere, 'grove.sock'), GROVE_HOME: elsewhere } });
  const s = await start(d, task.id, { prompt: 'run: touch reached.txt' }, t);
  const a = await pendingOf(d, s.id);
  assert.equal(a.input.command, 'touch reached.txt');
  assert.equal((await answer(d, a, { decision: 'allow' })).status, 200);
  const done = await ended(d, s.id);
  assert.deepEqual([done.status, done.exit_code], ['exited', 0]);
  assert.ok(existsSync(path.join(repo, task.worktree_path, 'reached.txt')));
});

test('approval_timeout_s: the approval expires, the agent is answered reject once with "no decision within N s"', async (t) => {
  const d = await daemon();
  const { task, repo } = await readyTaskOn(d, t);
  const s = await start(d, task.id, { prompt: 'run: touch late.txt', approval_timeout_s: 1 }, t);
  const done = await ended(d, s.id);
  const [a] = (await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json;
  assert.equal(a.status, 'expired');
  assert.equal(existsSync(path.join(repo, task.worktree_path, 'late.txt')), false);
  const seen = fixtureLog(sharedDir, done.agent_session_id).find((x) => x.event === 'permission' && a.key.endsWith(`:${x.toolCallId}`));
  assert.deepEqual([seen.outcome.optionId, seen.meta.grove.message], ['cancel', 'no decision within 1 s']);
});

test('an agent whose modes are a `mode` config option (OpenCode\'s agents) gets its mode by session/set_config_option; a mode it lacks fails the session saying what it offers', async (t) => {
  const d = await daemon();
  const { task, repo } = await readyTaskOn(d, t);
  const s = await start(d, task.id, { agent: 'acp-config', prompt: 'run: touch yolo.txt', mode: 'full' }, t);
  const done = await ended(d, s.id);
  assert.equal(done.exit_code, 0);
  assert.ok(existsSync(path.join(repo, task.worktree_path, 'yolo.txt')), 'yolo: ran without asking');
  assert.deepEqual((await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json, []);
  assert.deepEqual(fixtureLog(sharedDir, done.agent_session_id).filter((e) => e.event === 'set_mode').map((e) => [e.modeId, e.by]), [['yolo', 'config']]);
  // An acp_modes entry the agent does not offer: the session fails at its start, saying what it offers.
  const lacking = await ended(d, (await start(d, task.id, { agent: 'acp-nomode', prompt: 'say: hi' }, t)).id);
  assert.deepEqual([lacking.status, lacking.result.is_error], ['failed', true]);
  assert.equal(lacking.result.text, 'the agent offers no session mode plan-only (it offers: default, autoEdit, yolo)');
});

test('a question by elicitation is an approval of kind question, answered with text', async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const s = await start(d, task.id, { prompt: 'ask: Which database?' }, t);
  const q = await pendingOf(d, s.id);
  assert.equal(q.kind, 'question');
  assert.equal(q.tool, 'elicitation');
  assert.equal(q.input.question, 'Which database?', 'shown as the question, as the dashboard shows one');
  assert.deepEqual(Object.keys(q.input.requestedSchema.properties), ['answer']);
  assert.equal((await answer(d, q, { decision: 'allow', answer: 'postgres' })).status, 200);
  const done = await ended(d, s.id);
  assert.equal(done.result.text, 'you said: postgres. ');
});

test('a follow-up resumes the agent session (session/resume), or loads it (session/load) when that is all the agent offers or its resume is not answered; history replayed is not the result', async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  for (const agent of ['acp', 'acp-load', 'acp-unanswered']) {
    const s = await start(d, task.id, { agent, prompt: 'say: first', mode: 'full' }, t);
    const first = await ended(d, s.id);
    assert.equal(first.result.text, 'first');
    const f = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'history' } });
    assert.equal(f.status, 201, f.text);
    assert.deepEqual(f.json.command.slice(5, 9), ['--resume', first.agent_session_id, '--acp-mode', 'yolo']);
    const next = await ended(d, f.json.id);
    assert.equal(next.exit_code, 0);
    assert.equal(next.agent_session_id, first.agent_session_id);
    assert.equal(next.result.text, '1 earlier prompts: say: first', `${agent}: the same session, its replay not read as the result`);
    const how = fixtureLog(sharedDir, first.agent_session_id).map((e) => e.event);
    assert.ok(how.includes(agent === 'acp' ? 'resume' : 'load'), `${agent}: ${how}`);
    const opened = (await allLines(d, f.json.id)).map((l) => JSON.parse(l.text)).find((l) => l.type === 'session');
    assert.equal(opened.how, agent === 'acp' ? 'resume' : 'load', `${agent}: an unanswered resume falls back on load`);
  }
});

test('refusal and a crash end the session as errors; GET /api/agents says approvals for an ACP agent; one whose command is missing is AGENT_NOT_INSTALLED', async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const r = await ended(d, (await start(d, task.id, { prompt: 'say: no\nrefuse' }, t)).id);
  assert.equal(r.exit_code, 1);
  assert.equal(r.result.is_error, true);
  const c = await ended(d, (await start(d, task.id, { prompt: 'crash' }, t)).id);
  assert.equal(c.exit_code, 1);
  assert.equal(c.result.is_error, true);
  assert.match(c.result.text, /exited \(status 3\)|ACP connection closed/);
  const agents = (await d.socket('GET', '/api/agents')).json;
  assert.equal(agents.find((a: any) => a.name === 'acp').approvals, true);
  assert.equal(agents.find((a: any) => a.name === 'fixture').approvals, false);
  // The agent's own command must be there (the bridge's Node always is): 422, nothing started.
  assert.equal(agents.find((a: any) => a.name === 'acp-ghost').available, false);
  const ghost = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'acp-ghost', prompt: 'hi' } });
  assert.deepEqual([ghost.status, ghost.json.code], [422, 'AGENT_NOT_INSTALLED']);
  assert.match(ghost.json.detail, /no-such-acp-agent \(agent acp-ghost\) is not on the daemon's PATH/);
});

test('kill while pending: the approval ends expired and the bridge and agent are gone; timeout_s while pending: killed, timed out', async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const s = await start(d, task.id, { prompt: 'run: touch never.txt' }, t);
  const a = await pendingOf(d, s.id);
  assert.equal((await d.socket('DELETE', `/api/sessions/${s.id}`)).status, 200);
  assert.equal((await d.socket('GET', `/api/approvals/${a.id}`)).json.status, 'expired');
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.status, 'killed');
  assert.deepEqual(liveGroupMembers(s.pid), [], 'the bridge and the agent went with the group');

  // The bound must outlast the bridge's and the agent's start on a loaded machine, so that it
  // ends the session while the approval is pending.
  const tm = await start(d, task.id, { prompt: 'run: touch never.txt', timeout_s: 12 }, t);
  await pendingOf(d, tm.id);
  const timed = await ended(d, tm.id);
  assert.deepEqual([timed.status, timed.timed_out], ['killed', true]);
  assert.equal((await d.socket('GET', `/api/approvals?session_id=${tm.id}`)).json[0].status, 'expired');
});

test('a daemon restart while an approval is pending: the bridge waits through it, and the command runs once allowed after', async (t) => {
  const dir = makeTempDir(t, 'grove-acp-restart-');
  const home = agentHome(t, acpConfig(dir));
  const d = await startDaemon(t, { home });
  const { task, repo } = await readyTaskOn(d, t);
  const s = await start(d, task.id, { prompt: 'run: touch after-restart.txt' }, t);
  const a = await pendingOf(d, s.id);
  await d.stop();
  const d2 = await startDaemon(t, { home });
  t.after(() => d2.socket('DELETE', `/api/sessions/${s.id}`).catch(() => {}));
  assert.equal((await answer(d2, a, { decision: 'allow' })).status, 200);
  const done = await ended(d2, s.id);
  assert.equal(done.exit_code, 0);
  assert.ok(existsSync(path.join(repo, task.worktree_path, 'after-restart.txt')), 'allowed after the restart: it ran');
});
