// grove's Codex bridge (daemon/bridges/codex.ts): what it asks about each request of `codex
// app-server`, how a verdict is answered, and `grove codex-bridge` over a stand-in server
// (test/fixtures/codex-app-server.mjs) for its turn, its output and its exit code, and (with a
// daemon) for the questions it asks. Against the real CLI: test/real-agents/codex.test.ts.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { answerOf, answersOf, askOf, innerCommand, POLICY, questionsOf } from '../../daemon/bridges/codex.ts';
import { ROOT } from '../../daemon/runtime/root.ts';
import { DAEMON_ENTRY, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempDir } from '../helpers/git.ts';
import { gate, readyTaskOn, sharedAgentDaemon } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

// The lines of a real app-server turn (codex-cli 0.169.0): an escalated `touch esc.txt`, declined.
const recorded = readFileSync(path.join(ROOT, 'test', 'fixtures', 'agent-output', 'codex-app-declined.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));

test('innerCommand: the command inside `/bin/bash -lc \'…\'`, its quotes undone; anything else as is', () => {
  assert.equal(innerCommand("/bin/bash -lc 'touch esc.txt'"), 'touch esc.txt');
  assert.equal(innerCommand(`bash -c 'echo '\\''hi'\\'' > a'`), "echo 'hi' > a");
  assert.equal(innerCommand("/usr/bin/zsh -lc 'npm test'"), 'npm test');
  assert.equal(innerCommand('npm test'), 'npm test');
  assert.equal(innerCommand("/bin/bash -lc 'a' 'b'"), "/bin/bash -lc 'a' 'b'", 'not one quoted command');
});

test('askOf: a command approval of the recorded turn is a Bash call with the command the model asked for, keyed by turn and call id', () => {
  const request = recorded.find((m) => m.method === 'item/commandExecution/requestApproval');
  const items = new Map([[request.params.itemId, recorded.find((m) => m.method === 'item/started' && m.params.item.type === 'commandExecution').params.item]]);
  assert.deepEqual(askOf(request.method, request.params, items), {
    key: `codex:${request.params.turnId}:call_scripted_0002`,
    kind: 'tool',
    tool: 'Bash',
    input: { command: 'touch esc.txt', cwd: '/users/u/code/task', reason: 'Run it' },
  });
  // A second callback of the same item (zsh-exec-bridge subcommands) has a key of its own.
  assert.equal(askOf(request.method, { ...request.params, approvalId: 'cb-2' }, items)!.key, `codex:${request.params.turnId}:call_scripted_0002:cb-2`);
  // Without the command in the request, the item's.
  const { command: _, ...bare } = request.params;
  assert.equal(askOf(request.method, bare, items)!.input.command, 'touch esc.txt');
});

test('askOf: a file change is an Edit with the changes its item announced (file_path when one); requests grove does not ask about are null', () => {
  const changes = [{ path: '/users/u/code/task/a.txt', kind: { type: 'add' }, diff: 'hello\n' }];
  const items = new Map([['call_7', { type: 'fileChange', id: 'call_7', changes }]]);
  assert.deepEqual(askOf('item/fileChange/requestApproval', { threadId: 't', turnId: 'u', itemId: 'call_7', reason: null, grantRoot: null }, items), {
    key: 'codex:u:call_7',
    kind: 'tool',
    tool: 'Edit',
    input: { file_path: '/users/u/code/task/a.txt', changes },
  });
  const two = new Map([['call_8', { changes: [...changes, { path: '/users/u/code/task/b.txt' }] }]]);
  assert.equal('file_path' in askOf('item/fileChange/requestApproval', { turnId: 'u', itemId: 'call_8' }, two)!.input, false);
  assert.equal(askOf('item/permissions/requestApproval', { turnId: 'u', itemId: 'call_9' }, items), null);
  assert.equal(askOf('item/tool/requestUserInput', { turnId: 'u', itemId: 'call_9' }, items), null, 'questions are questionsOf\'s');
  assert.equal(askOf('item/commandExecution/requestApproval', { turnId: 'u' }, items), null, 'no item id: nothing to key it by');
});

test("answerOf: allow accepts; deny and expiry decline (Codex tells the model \"rejected by user\") and grove's own words are steered in", () => {
  const ask = { key: 'k', kind: 'tool' as const, tool: 'Bash', input: { command: 'touch a' } };
  assert.deepEqual(answerOf(ask, { behavior: 'allow', answer: null }), { decision: 'accept', say: null });
  assert.deepEqual(answerOf(ask, { behavior: 'deny', message: 'not now' }), { decision: 'decline', say: 'grove: the command `touch a` was not run: not now' });
  assert.deepEqual(answerOf({ ...ask, tool: 'Edit', input: {} }, { behavior: 'expired', message: 'no decision within 2 s' }), {
    decision: 'decline',
    say: 'grove: the file change was not made: no decision within 2 s',
  });
});

// A request_user_input as codex-cli 0.169.0 sends it: two questions, each with its options.
const QUESTIONS = [
  { id: 'db', header: 'Storage', question: 'Which database should I use?', isOther: true, isSecret: false, options: [{ label: 'PostgreSQL', description: 'the one the project runs' }, { label: 'SQLite', description: 'a file' }] },
  { id: 'table', header: 'Name', question: 'What should the table be called?', isOther: true, isSecret: false, options: [{ label: 'users', description: 'as the code calls them' }] },
];
const ASKED = [
  {
    key: 'codex:turn-1:call_q:db',
    kind: 'question',
    tool: 'AskUserQuestion',
    input: { question: 'Which database should I use?', header: 'Storage', options: [{ label: 'PostgreSQL', description: 'the one the project runs' }, { label: 'SQLite', description: 'a file' }] },
  },
  { key: 'codex:turn-1:call_q:table', kind: 'question', tool: 'AskUserQuestion', input: { question: 'What should the table be called?', header: 'Name', options: [{ label: 'users', description: 'as the code calls them' }] } },
];

test('questionsOf: each question of a request_user_input is a question of its own with its header and options, keyed by turn, call and question id', () => {
  const params = { threadId: 'thread-1', turnId: 'turn-1', itemId: 'call_q', questions: QUESTIONS, isBlocking: true, autoResolutionMs: null };
  const qs = questionsOf(params);
  assert.deepEqual(qs.map((q) => q.ask), ASKED);
  assert.deepEqual(qs.map((q) => [q.id, q.labels]), [['db', ['PostgreSQL', 'SQLite']], ['table', ['users']]]);
  // A free question (no options) and a secret one, which the person is told grove keeps.
  const [free] = questionsOf({ turnId: 'u', itemId: 'c', questions: [{ id: 'why', header: '', question: 'Why?', isOther: true, isSecret: true, options: null }] });
  assert.deepEqual(free!.ask.input, { question: 'Why?', secret: true });
  assert.deepEqual(questionsOf({ turnId: 'u', questions: QUESTIONS }), [], 'no item id: nothing to key it by');
});

test('answersOf: an option as its label, other text as `user_note: …`, deny and expiry as no answers with grove\'s words to steer in', () => {
  const qs = questionsOf({ turnId: 'turn-1', itemId: 'call_q', questions: QUESTIONS });
  assert.deepEqual(answersOf(qs, [{ behavior: 'allow', answer: 'SQLite' }, { behavior: 'allow', answer: ' people ' }]), {
    answers: { db: { answers: ['SQLite'] }, table: { answers: ['user_note: people'] } },
    say: null,
  });
  assert.deepEqual(answersOf(qs, [{ behavior: 'deny', message: 'ask me later' }, { behavior: 'expired', message: 'no decision within 2 s' }]), {
    answers: { db: { answers: [] }, table: { answers: [] } },
    say: 'grove: no answer to "Which database should I use?": ask me later\ngrove: no answer to "What should the table be called?": no decision within 2 s',
  });
  assert.deepEqual(answersOf(qs, [{ behavior: 'allow', answer: '' }, { behavior: 'allow', answer: null }]).answers, { db: { answers: [] }, table: { answers: [] } });
});

test('POLICY: read and edit keep their sandbox and ask on request (the model escalates what the sandbox would refuse)', () => {
  assert.deepEqual(POLICY, { read: { sandbox: 'read-only', approvalPolicy: 'on-request' }, edit: { sandbox: 'workspace-write', approvalPolicy: 'on-request' } });
});

// `grove codex-bridge` over the stand-in server, with no daemon (a turn that asks nothing needs none).
function bridge(t: test.TestContext, args: string[], turn: string) {
  const dir = makeTempDir(t, 'grove-codex-bridge-');
  const log = path.join(dir, 'log.jsonl');
  const fake = path.join(ROOT, 'test', 'fixtures', 'codex-app-server.mjs');
  const r = spawnSync(process.execPath, [DAEMON_ENTRY, 'codex-bridge', '--session', 's-1', ...args, '--', process.execPath, fake], {
    env: { ...process.env, GROVE_SOCKET: path.join(dir, 'none.sock'), FAKE_LOG: log, FAKE_TURN: turn },
    encoding: 'utf8',
    timeout: 60_000,
  });
  let sent: any[] = [];
  try {
    sent = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    // the bridge never wrote to the server
  }
  return { code: r.status, lines: r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)), stderr: r.stderr, sent };
}

test('grove codex-bridge: initialize, thread/start with the mode\'s sandbox and policy, turn/start with the prompt; every server line on stdout; exit 0 when the turn completes', (t) => {
  const run = bridge(t, ['--mode', 'edit', '--prompt=- fix it'], 'completed');
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.sent.map((m) => m.method), ['initialize', 'initialized', 'thread/start', 'turn/start']);
  assert.deepEqual(run.sent[2].params, { sandbox: 'workspace-write', approvalPolicy: 'on-request' });
  assert.deepEqual(run.sent[3].params, { threadId: 'thread-1', input: [{ type: 'text', text: '- fix it', text_elements: [] }] });
  assert.deepEqual(run.lines.map((l) => l.method ?? `reply ${l.id}`), ['reply 1', 'reply 2', 'thread/started', 'reply 3', 'item/completed', 'turn/completed']);
  assert.equal(run.lines[4].params.item.text, 'heard: - fix it');
});

test('grove codex-bridge: a follow-up resumes its thread (read: read-only); a failed turn exits 1; a server that exits before the turn ends, with its code (1 when it cannot start)', (t) => {
  const resumed = bridge(t, ['--mode', 'read', '--resume', 'thread-9', '--prompt=go on'], 'completed');
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(resumed.sent[2], { method: 'thread/resume', id: 2, params: { threadId: 'thread-9', sandbox: 'read-only', approvalPolicy: 'on-request' } });
  assert.equal(resumed.sent[3].params.threadId, 'thread-9');
  assert.equal(bridge(t, ['--mode', 'edit', '--prompt=x'], 'failed').code, 1);
  const gone = bridge(t, ['--mode', 'edit', '--prompt=x'], 'exit');
  assert.equal(gone.code, 3);
  assert.equal(gone.lines.at(-1).id, 3, 'what it printed before it went is on stdout');
  const missing = spawnSync(process.execPath, [DAEMON_ENTRY, 'codex-bridge', '--session', 's-1', '--mode', 'edit', '--prompt=x', '--', path.join(ROOT, 'no-such-codex')], {
    env: { ...process.env, GROVE_SOCKET: path.join(ROOT, 'none.sock') },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(missing.status, 1, 'a server that cannot start');
  assert.match(missing.stderr, /ENOENT/);
});

test('grove codex-bridge: without --session, a mode of read or edit, or the server\'s command, it is a usage error', () => {
  for (const args of [['--mode', 'edit', '--', 'codex', 'app-server'], ['--session', 's', '--mode', 'full', '--', 'codex'], ['--session', 's', '--mode', 'edit']]) {
    const r = spawnSync(process.execPath, [DAEMON_ENTRY, 'codex-bridge', ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /grove codex-bridge needs/);
  }
});

// With a daemon: the questions of the stand-in server (FAKE_TURN=ask) are asked for a fixture
// session held running, and `grove codex-bridge` answers the server with the person's answers.
const daemon = sharedAgentDaemon();

async function asking(t: test.TestContext, session: Record<string, unknown> = {}) {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const g = gate(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'fixture', prompt: `wait:${g.path}`, ...session } });
  assert.equal(s.status, 201, s.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${s.json.id}`));
  const dir = makeTempDir(t, 'grove-codex-bridge-');
  const log = path.join(dir, 'log.jsonl');
  const fake = path.join(ROOT, 'test', 'fixtures', 'codex-app-server.mjs');
  const child = spawn(process.execPath, [DAEMON_ENTRY, 'codex-bridge', '--session', s.json.id, '--mode', 'edit', '--prompt=pick one', '--', process.execPath, fake], {
    env: { ...process.env, GROVE_SOCKET: d.socketPath, FAKE_LOG: log, FAKE_TURN: 'ask' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout.resume();
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  const finished = async () => {
    const code = await exited;
    return { code, stderr, sent: readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
  };
  return { d, session: s.json, finished };
}

async function pendingQuestions(d: TestDaemon, sessionId: string): Promise<any[]> {
  return until(async () => {
    const list = (await d.socket('GET', `/api/approvals?status=pending&session_id=${sessionId}`)).json;
    // Both are asked at once: in the order of their keys (db, table), whichever came first.
    return list.length === 2 ? list.sort((a: any, b: any) => a.key.localeCompare(b.key)) : null;
  }, 'two pending questions', 30_000);
}

const decide = async (d: TestDaemon, a: any, body: Record<string, unknown>) => {
  const r = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, ...body } });
  assert.equal(r.status, 200, r.text);
};

test('grove codex-bridge: a request_user_input is one pending question per question; the answers reach the server as Codex words them (an option\'s label, other text as a note)', async (t) => {
  const { d, session, finished } = await asking(t);
  const pending = await pendingQuestions(d, session.id);
  assert.deepEqual(
    pending.map((a) => ({ key: a.key, kind: a.kind, tool: a.tool, input: a.input })),
    ASKED,
  );
  assert.equal((await d.socket('GET', `/api/sessions/${session.id}`)).json.waiting, 'approval');
  await decide(d, pending[0], { decision: 'allow', answer: 'SQLite' });
  await decide(d, pending[1], { decision: 'allow', answer: 'people' });
  const run = await finished();
  assert.equal(run.code, 0, run.stderr);
  const reply = run.sent.find((m) => m.id === 0 && m.method === undefined);
  assert.deepEqual(reply, { id: 0, result: { answers: { db: { answers: ['SQLite'] }, table: { answers: ['user_note: people'] } } } });
  assert.equal(run.sent.filter((m) => m.method === 'turn/steer').length, 0, 'nothing to add to answers');
  const decided = (await d.socket('GET', `/api/approvals?session_id=${session.id}`)).json.sort((a: any, b: any) => a.key.localeCompare(b.key));
  assert.deepEqual(decided.map((a: any) => [a.status, a.answer]), [['allowed', 'SQLite'], ['allowed', 'people']]);
});

test('grove codex-bridge: a denied question is answered with no answers, and the deny\'s message is steered into the turn before the answer', async (t) => {
  const { d, session, finished } = await asking(t);
  const pending = await pendingQuestions(d, session.id);
  await decide(d, pending[0], { decision: 'deny', message: 'ask me later' });
  await decide(d, pending[1], { decision: 'allow', answer: 'users' });
  const run = await finished();
  assert.equal(run.code, 0, run.stderr);
  const steer = run.sent.findIndex((m) => m.method === 'turn/steer');
  const reply = run.sent.findIndex((m) => m.id === 0 && m.method === undefined);
  assert.ok(steer >= 0 && steer < reply, 'steered before the answer');
  assert.deepEqual(run.sent[steer].params, {
    threadId: 'thread-1',
    expectedTurnId: 'turn-1',
    input: [{ type: 'text', text: 'grove: no answer to "Which database should I use?": ask me later', text_elements: [] }],
  });
  assert.deepEqual(run.sent[reply].result, { answers: { db: { answers: [] }, table: { answers: ['users'] } } });
});

test('grove codex-bridge: questions left undecided past approval_timeout_s are answered with no answers, the model told "no decision within 2 s"', async (t) => {
  const { d, session, finished } = await asking(t, { approval_timeout_s: 2 });
  const run = await finished();
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.sent.find((m) => m.id === 0 && m.method === undefined).result, { answers: { db: { answers: [] }, table: { answers: [] } } });
  const said = run.sent.filter((m) => m.method === 'turn/steer').map((m) => m.params.input[0].text);
  assert.deepEqual(said, ['grove: no answer to "Which database should I use?": no decision within 2 s\ngrove: no answer to "What should the table be called?": no decision within 2 s']);
  const ended = (await d.socket('GET', `/api/approvals?session_id=${session.id}`)).json;
  assert.deepEqual(ended.map((a: any) => a.status), ['expired', 'expired']);
});
