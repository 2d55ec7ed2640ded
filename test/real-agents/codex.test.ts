// `npm run test:agents`: the built-in `codex` agent against the real Codex CLI, installed from
// npm into a temporary folder (never a dependency of grove). With no network it prints its
// thread id and then retries forever: `timeout_s` bounds it, and a follow-up runs
// `codex exec resume` with that thread id. Against a scripted Responses API
// (test/helpers/openai-responses-server.ts) it really runs commands: `full` through `codex exec`,
// `read` and `edit` through grove's bridge (`grove codex-bridge` over `codex app-server`), where
// what the model asks beyond the sandbox is an approval.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { addProject, DAEMON_ENTRY, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { callOutputs, codexConfig, startResponsesServer, type ResponsesTurn } from '../helpers/openai-responses-server.ts';
import type { ScriptedServer } from '../helpers/scripted-server.ts';
import { cliEnv, installCliForFile } from '../helpers/real-agents.ts';
import { allLines, liveGroupMembers, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

// The CLI, installed once for this file's tests.
const codexBin = installCliForFile('@openai/codex@0.171.0');

test('the built-in codex agent: the prompt as text, thread_id captured, timeout_s ends it killed, a follow-up resumes the thread', async (t) => {
  // No credentials: a home of its own and no API key.
  const env = cliEnv(t, codexBin(), { OPENAI_API_KEY: undefined, CODEX_API_KEY: undefined });
  const d = await startDaemon(t, { env });
  const agents = (await d.socket('GET', '/api/agents')).json;
  assert.equal(agents.find((a: any) => a.name === 'codex').available, true);
  assert.equal(agents.find((a: any) => a.name === 'codex').approvals, true, 'the built-in codex asks through grove');

  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'codex' } })).json;
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: '- fix the failing test', mode: 'full', timeout_s: 20 } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.command, ['codex', 'exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '--', '- fix the failing test']);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'killed', 'it retried until the time limit');
  assert.equal(s.timed_out, true);
  assert.ok(Date.parse(s.ended_at) - Date.parse(s.created_at) >= 20_000);

  const lines = await allLines(d, r.json.id);
  assert.ok(!lines.some((l) => /unknown option|unexpected argument|Usage:/i.test(l.text)), lines.map((l) => l.text).join('\n'));
  const first = JSON.parse(lines.find((l) => l.stream === 'stdout').text);
  assert.equal(first.type, 'thread.started');
  assert.equal(s.agent_session_id, first.thread_id, 'the thread id, read from its first line');

  const f = await d.tcp('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: '--version', timeout_s: 5 } });
  assert.equal(f.status, 201, f.text);
  assert.deepEqual(f.json.command, ['codex', 'exec', 'resume', '--json', first.thread_id, '--dangerously-bypass-approvals-and-sandbox', '--', '--version']);
  await waitSessionEnd(d, f.json.id);
  const resumed = (await d.socket('GET', `/api/sessions/${f.json.id}`)).json;
  assert.equal(resumed.timed_out, true);
  const again = await allLines(d, f.json.id);
  assert.ok(!again.some((l) => /^codex-cli \d/.test(l.text)), 'the prompt --version did not print its version');
  assert.equal(JSON.parse(again.find((l) => l.stream === 'stdout').text).thread_id, first.thread_id, 'the same thread continued');
});

// A daemon whose sessions' Codex talks to a scripted model (a config.toml in its own home), with a
// project (and its .grove.json, if given) and one ready task. Its sessions are confined (DESIGN
// §18), Codex's own sandbox (the system bubblewrap) inside grove's: the model's base URL is in
// Codex's config file, not its environment, so the project names its host in `sandbox.network`.
// Its home is not in the system's temporary folder: Codex 0.171.0 refuses to make its helper
// links (`codex-linux-sandbox`) under it, and then every sandboxed command fails ("bwrap: execvp
// codex-linux-sandbox: No such file or directory"). As root, Codex's sandbox cannot nest in
// grove's (grove drops root's capabilities, and Codex's bwrap then cannot map its user: "bwrap:
// setting up uid map: Operation not permitted"; as any other user it nests): there, the sessions
// that run Codex's sandbox (read and edit) run unconfined.
const NESTS = process.getuid?.() !== 0;
async function codexDaemon(t: TestContext, script: ResponsesTurn[], grove: { sandbox?: object; [k: string]: unknown } = {}, config = '', home = codexHome(t)) {
  const m = await startResponsesServer(t, script);
  mkdirSync(path.join(home, '.codex'));
  writeFileSync(path.join(home, '.codex', 'config.toml'), codexConfig(m.url) + config);
  const env = { PATH: `${codexBin()}:${process.env.PATH}`, HOME: home, OPENAI_API_KEY: undefined, CODEX_API_KEY: undefined };
  const d = await startDaemon(t, { env, ...(NESTS ? {} : { config: { sandbox: false } }) });
  const groveJson = { ...grove, sandbox: { ...grove.sandbox, network: [new URL(m.url).host] } };
  const files = { 'README.md': '# fixture\n', '.grove.json': JSON.stringify(groveJson) };
  const project = await addProject(d, makeRepo(t, { files }));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'scripted' } })).json;
  return { m, d, env, task, worktree: path.resolve(project.path, task.worktree_path) };
}

function codexHome(t: TestContext): string {
  return makeTempDir(t, 'grove-codex-home-', '/var/tmp');
}

// A session's end: its row, its stdout events and its approvals.
async function ended(d: TestDaemon, id: string) {
  await waitSessionEnd(d, id);
  const s = (await d.socket('GET', `/api/sessions/${id}`)).json;
  const lines = await allLines(d, id);
  const said = lines.map((l) => l.text).join('\n');
  const approvals = (await d.socket('GET', `/api/approvals?session_id=${id}`)).json;
  return { s, said, approvals };
}

async function pendingOf(d: TestDaemon, sessionId: string): Promise<any> {
  return until(async () => (await d.socket('GET', `/api/approvals?status=pending&session_id=${sessionId}`)).json[0], 'a pending approval', 120_000);
}

// Codex's shell tool as the model calls it: `exec_command` (in its sandbox), or escalated out of
// it (`require_escalated`), which Codex asks about under the approval policy `on-request`.
const exec = (cmd: string): ResponsesTurn => ({ call: { name: 'exec_command', arguments: { cmd } } });
const escalated = (cmd: string): ResponsesTurn => ({ call: { name: 'exec_command', arguments: { cmd, sandbox_permissions: 'require_escalated', justification: 'Run it' } } });

// The user messages of a request's input, as texts (what Codex put before the model).
const userTexts = (m: ScriptedServer, turn: number): string[] =>
  (m.turns()[turn]?.body.input ?? []).filter((i: any) => i.type === 'message' && i.role === 'user').flatMap((i: any) => i.content.map((c: any) => c.text));

test('full mode: `codex exec` runs the scripted command in the worktree; the session exits 0 with the thread id, the result text and tokens', async (t) => {
  const { m, d, task, worktree } = await codexDaemon(t, [exec('touch ran.txt'), { text: 'Created ran.txt.' }]);
  // Codex's own sandbox is off in full mode: confined by grove's, as root too.
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing', mode: 'full', sandbox: true } });
  assert.equal(r.status, 201, r.text);
  const { s, said } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.equal(s.exit_code, 0);
  assert.deepEqual(s.sandbox, { confined: true });
  assert.ok(existsSync(path.join(worktree, 'ran.txt')), 'the command ran in the worktree');
  assert.equal(m.turns().length, 2);
  assert.match(callOutputs(m.turns()[1]!)[0]!.output, /Process exited with code 0/);
  assert.equal(s.result.text, 'Created ran.txt.');
  assert.equal(s.result.is_error, false);
  assert.ok(s.result.output_tokens > 0);
  assert.match(s.agent_session_id, /^[0-9a-f-]{36}$/);
});

test('edit mode: grove runs codex-bridge over `codex app-server`; an escalated command is a pending approval with the whole command; allowed, it runs and the session exits 0', async (t) => {
  const { m, d, task, worktree } = await codexDaemon(t, [exec('touch plain.txt'), escalated('touch asked.txt'), { text: 'It ran.' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: '- do the scripted thing' } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.command, [process.execPath, DAEMON_ENTRY, 'codex-bridge', '--session', r.json.id, '--mode', 'edit', '--prompt=- do the scripted thing', '--', 'codex', 'app-server']);
  const a = await pendingOf(d, r.json.id);
  assert.equal((await d.socket('GET', `/api/sessions/${r.json.id}`)).json.waiting, 'approval');
  assert.deepEqual([a.kind, a.tool, a.input], ['tool', 'Bash', { command: 'touch asked.txt', cwd: worktree, reason: 'Run it' }]);
  assert.ok(existsSync(path.join(worktree, 'plain.txt')), 'what the sandbox allows ran without asking');
  assert.ok(!existsSync(path.join(worktree, 'asked.txt')), 'nothing ran while it waits');
  const allowed = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow' } });
  assert.equal(allowed.status, 200, allowed.text);

  const { s, said, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.equal(s.exit_code, 0);
  assert.ok(existsSync(path.join(worktree, 'asked.txt')), 'the allowed command ran in the worktree');
  const asked = callOutputs(m.turns()[2]!).at(-1);
  assert.match(asked!.output, /Process exited with code 0/);
  assert.equal(a.key.split(':').at(-1), asked!.call_id, "the approval's key ends with Codex's call id");
  assert.deepEqual(approvals.map((x: any) => x.status), ['allowed']);
  assert.equal(s.result.text, 'It ran.');
  assert.equal(s.result.is_error, false);
  assert.ok(s.result.output_tokens > 0);
  assert.match(s.agent_session_id, /^[0-9a-f-]{36}$/, 'the thread id, from thread/started');
});

test('edit mode: denied with a message, the command does not run; Codex tells the model it was rejected, and grove\'s message reaches the model', async (t) => {
  const message = 'not in this task (test)';
  const { m, d, task, worktree } = await codexDaemon(t, [escalated('touch denied.txt'), { text: 'Refused, fine.' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  const a = await pendingOf(d, r.json.id);
  const denied = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'deny', message } });
  assert.equal(denied.status, 200, denied.text);
  const { s, said, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.ok(!existsSync(path.join(worktree, 'denied.txt')));
  const [out] = callOutputs(m.turns()[1]!);
  assert.match(out!.output, /rejected by user/, 'what Codex itself tells the model');
  assert.ok(userTexts(m, 1).includes(`grove: the command \`touch denied.txt\` was not run: ${message}`), userTexts(m, 1).join('\n'));
  assert.deepEqual(approvals.map((x: any) => [x.status, x.reason]), [['denied', message]]);
  assert.equal(s.result.text, 'Refused, fine.');
});

test('edit mode: an `allow` rule in .grove.json lets the command run with no pending approval', async (t) => {
  const { d, task, worktree } = await codexDaemon(t, [escalated('touch ruled.txt'), { text: 'It ran.' }], { allow: ['Bash(touch ruled.txt)'] });
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  const { s, said, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.ok(existsSync(path.join(worktree, 'ruled.txt')));
  assert.deepEqual(approvals.map((a: any) => [a.status, a.tool, a.input.command]), [['allowed', 'Bash', 'touch ruled.txt']]);
  const events = (await d.socket('GET', `/api/events?task_id=${task.id}`)).json.events.map((e: any) => e.type);
  assert.ok(!events.includes('approval.requested'), events.join(' '));
});

test('edit mode: allowed with remember "session", the same command runs without asking again in the session and in a follow-up', async (t) => {
  const { d, task, worktree } = await codexDaemon(t, [escalated('touch again.txt'), escalated('touch again.txt'), { text: 'Twice.' }, escalated('touch again.txt'), { text: 'Thrice.' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  const a = await pendingOf(d, r.json.id);
  const allowed = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow', remember: 'session' } });
  assert.equal(allowed.status, 200, allowed.text);
  const { s, said, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.ok(existsSync(path.join(worktree, 'again.txt')));
  assert.deepEqual(approvals.map((x: any) => x.status), ['allowed', 'allowed']);
  assert.equal(approvals[1].reason, 'allowed by the rule Bash(touch again.txt)', 'the second was allowed by the remembered rule');

  const f = await d.tcp('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: 'once more' } });
  assert.equal(f.status, 201, f.text);
  const next = await ended(d, f.json.id);
  assert.equal(next.s.status, 'exited', next.said);
  assert.equal(next.s.result.text, 'Thrice.');
  assert.deepEqual(next.approvals.map((x: any) => [x.status, x.reason]), [['allowed', 'allowed by the rule Bash(touch again.txt)']], 'the follow-up continues the session that was allowed');
  const events = (await d.socket('GET', `/api/events?task_id=${task.id}`)).json.events.filter((e: any) => e.type === 'approval.requested');
  assert.equal(events.length, 1, 'only the first was asked');
});

test('edit mode: approval_timeout_s 2 expires the approval, the command does not run, and the model is told "no decision within 2 s"', async (t) => {
  const { m, d, task, worktree } = await codexDaemon(t, [escalated('touch late.txt'), { text: 'No answer.' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing', approval_timeout_s: 2 } });
  const { s, said, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.ok(!existsSync(path.join(worktree, 'late.txt')));
  assert.deepEqual(approvals.map((x: any) => [x.status, x.reason]), [['expired', 'no decision within 2 s']]);
  assert.ok(userTexts(m, 1).includes('grove: the command `touch late.txt` was not run: no decision within 2 s'), userTexts(m, 1).join('\n'));
});

test('edit mode: timeout_s ends a session that waits on an approval, killed, its approval expired', async (t) => {
  const { d, task, worktree } = await codexDaemon(t, [escalated('touch never.txt'), { text: 'unreached' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing', timeout_s: 8 } });
  await pendingOf(d, r.json.id);
  const { s, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'killed');
  assert.equal(s.timed_out, true);
  assert.ok(!existsSync(path.join(worktree, 'never.txt')));
  assert.deepEqual(approvals.map((x: any) => x.status), ['expired']);
});

test('edit mode: the daemon restarts while an approval is pending; allowed after, the command runs; a follow-up continues the same thread', async (t) => {
  const { m, d, env, task, worktree } = await codexDaemon(t, [escalated('touch restart.txt'), { text: 'It ran.' }, { text: 'Still here.' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  const a = await pendingOf(d, r.json.id);
  await d.stop();
  // The bridge (the session's process) outlives the daemon and asks again with the same key.
  const d2 = await startDaemon(t, { home: d.home, env });
  assert.equal((await d2.socket('GET', `/api/approvals/${a.id}`)).json.status, 'pending');
  const allowed = await d2.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow' } });
  assert.equal(allowed.status, 200, allowed.text);
  const first = await ended(d2, r.json.id);
  assert.equal(first.s.status, 'exited', first.said);
  assert.equal(first.s.exit_code, 0);
  assert.ok(existsSync(path.join(worktree, 'restart.txt')), 'the command allowed after the restart ran');
  assert.deepEqual(first.approvals.map((x: any) => x.id), [a.id], 'the same approval, asked again by key');
  assert.equal(first.s.result.text, 'It ran.');

  const f = await d2.tcp('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: 'and now?' } });
  assert.equal(f.status, 201, f.text);
  const thread = first.s.agent_session_id;
  assert.deepEqual(f.json.command, [process.execPath, DAEMON_ENTRY, 'codex-bridge', '--session', f.json.id, '--mode', 'edit', '--resume', thread, '--prompt=and now?', '--', 'codex', 'app-server']);
  const second = await ended(d2, f.json.id);
  assert.equal(second.s.status, 'exited', second.said);
  assert.equal(second.s.agent_session_id, thread, 'the same thread');
  assert.equal(second.s.result.text, 'Still here.');
  assert.equal(second.s.result.input_tokens, 10, "this turn's one request only, not the thread's");
  const texts = userTexts(m, 2);
  assert.ok(texts.includes('do the scripted thing') && texts.includes('and now?'), 'the follow-up carries the conversation so far');
  assert.equal(m.turns()[2]!.body.prompt_cache_key, thread);
});

test('read mode: the read-only sandbox refuses a write by itself (the model reads why); the model escalates it, that is asked, and allowed it runs', async (t) => {
  const { m, d, task, worktree } = await codexDaemon(t, [exec('touch plain.txt'), escalated('touch asked.txt'), { text: 'Done.' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing', mode: 'read' } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.command.slice(2, 7), ['codex-bridge', '--session', r.json.id, '--mode', 'read']);
  const a = await pendingOf(d, r.json.id);
  assert.equal(a.input.command, 'touch asked.txt');
  assert.ok(!existsSync(path.join(worktree, 'plain.txt')));
  assert.match(callOutputs(m.turns()[1]!).at(-1)!.output, /Read-only file system/);
  await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow' } });
  const { s, said } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.ok(existsSync(path.join(worktree, 'asked.txt')), 'allowed, it ran outside the sandbox');
});

test('edit mode, the model refuses the request (a 400): the turn fails, the bridge exits 1, the session fails with the error as its result', async (t) => {
  // An empty script: the server answers the first request 400, which Codex does not retry.
  const { m, d, task } = await codexDaemon(t, []);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  const { s, said } = await ended(d, r.json.id);
  assert.equal(s.status, 'failed', said);
  assert.equal(s.exit_code, 1);
  assert.equal(s.result.is_error, true);
  assert.match(s.result.text, /the script has 0 turns/);
  assert.match(s.agent_session_id, /^[0-9a-f-]{36}$/);
  assert.ok(m.requests.some((q) => q.path === '/v1/responses'));
});

test('edit mode, a usage limit (a 429 usage_limit_reached): the turn fails with Codex\'s message and the session says when the limit resets', async (t) => {
  const resetsAt = Math.floor(Date.now() / 1000) + 3600;
  const { d, task } = await codexDaemon(t, [{ fail: { status: 429, body: { error: { type: 'usage_limit_reached', message: 'cap', plan_type: 'pro', resets_at: resetsAt } } } }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  const { s, said } = await ended(d, r.json.id);
  assert.equal(s.status, 'failed', said);
  assert.equal(s.result.is_error, true);
  // Codex names a clock time to the minute, with its date when that is another day.
  assert.match(s.result.text, /usage limit.*try again at (?:\w+ \d{1,2}\w*, \d{4} )?\d{1,2}:\d{2}/);
  const resets = Date.parse(s.limit_resets_at);
  assert.ok(resets > Date.now() && resets <= (resetsAt + 60) * 1000, s.limit_resets_at);
});

test('edit mode: apply_patch in the worktree writes without asking; a file outside it is a pending Edit with its changes; allowed, it is written', async (t) => {
  // Outside the worktree, in a folder the project lets a confined session write (`sandbox.write`):
  // Codex's own sandbox still asks.
  const home = codexHome(t);
  mkdirSync(path.join(home, 'outside'));
  const outside = path.join(home, 'outside', 'out.txt');
  const patch = (file: string) => ({ custom: { name: 'apply_patch', input: `*** Begin Patch\n*** Add File: ${file}\n+hello\n*** End Patch\n` } });
  const { m, d, task, worktree } = await codexDaemon(t, [patch('inside.txt'), patch(outside), { text: 'Both written.' }], { sandbox: { write: ['~/outside'] } }, '', home);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  const a = await pendingOf(d, r.json.id);
  assert.deepEqual([a.kind, a.tool, a.input], ['tool', 'Edit', { file_path: outside, changes: [{ path: outside, kind: { type: 'add' }, diff: 'hello\n' }] }]);
  assert.equal(readFileSync(path.join(worktree, 'inside.txt'), 'utf8'), 'hello\n', 'the worktree is the sandbox: written without asking');
  assert.ok(!existsSync(outside), 'nothing written while it waits');
  await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow' } });
  const { s, said, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.equal(s.sandbox.confined, NESTS);
  assert.equal(readFileSync(outside, 'utf8'), 'hello\n');
  assert.deepEqual(approvals.map((x: any) => x.status), ['allowed']);
  assert.match(m.turns()[2]!.body.input.at(-1).output, /Success\. Updated the following files/);
});

test('edit mode: killed while it waits on an approval, the bridge and codex app-server go with the session, and the approval expires', async (t) => {
  const { d, task, worktree } = await codexDaemon(t, [escalated('touch killed.txt'), { text: 'unreached' }]);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'do the scripted thing' } });
  await pendingOf(d, r.json.id);
  const { pid } = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.ok(liveGroupMembers(pid).length >= 2, 'the bridge and the server run in the session\'s group');
  const killed = await d.socket('DELETE', `/api/sessions/${r.json.id}`);
  assert.ok(killed.status < 300, killed.text);
  const { s, approvals } = await ended(d, r.json.id);
  assert.equal(s.status, 'killed');
  assert.deepEqual(liveGroupMembers(pid), [], 'nothing of it is left running');
  assert.deepEqual(approvals.map((x: any) => [x.status, x.reason]), [['expired', 'no decision: the session ended (killed) while it waited']]);
  assert.ok(!existsSync(path.join(worktree, 'killed.txt')));
});

// Codex offers `request_user_input` in its Default mode only with the feature
// `default_mode_request_user_input` (under development in 0.169.0; otherwise the model is told "request_user_input is
// unavailable in Default mode"), set here in the session's own config.toml.
test('edit mode, request_user_input enabled by the user\'s config: the question is a pending question with its options; answered with a label, the model reads the answer as Codex words it', async (t) => {
  const questions = [{ id: 'db', header: 'Storage', question: 'Which database should I use?', options: [{ label: 'PostgreSQL', description: 'the one the project runs' }, { label: 'SQLite', description: 'a file' }] }];
  const { m, d, task } = await codexDaemon(t, [{ call: { name: 'request_user_input', arguments: { questions } } }, { text: 'SQLite it is.' }], undefined, '[features]\ndefault_mode_request_user_input = true\n');
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: 'ask me which database' } });
  assert.equal(r.status, 201, r.text);
  const a = await pendingOf(d, r.json.id);
  assert.deepEqual([a.kind, a.tool, a.input], ['question', 'AskUserQuestion', { question: 'Which database should I use?', header: 'Storage', options: questions[0]!.options }]);
  assert.equal(a.key.split(':').at(-1), 'db', "the key ends with the question's id");
  const answered = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow', answer: 'SQLite' } });
  assert.equal(answered.status, 200, answered.text);
  const { s, said } = await ended(d, r.json.id);
  assert.equal(s.status, 'exited', said);
  assert.equal(s.exit_code, 0);
  const [out] = callOutputs(m.turns()[1]!);
  assert.deepEqual(JSON.parse(out!.output), { answers: { db: { answers: ['SQLite'] } } }, 'what the model read');
  assert.equal(a.key.split(':').at(-2), out!.call_id, "then the model's call id");
  assert.equal(s.result.text, 'SQLite it is.');
});
