import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, DAEMON_ENTRY, makeHome, ROOT, stopProcess } from '../helpers/daemon.ts';
import { call, mcp } from '../helpers/mcp.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { gate, readyTaskOn, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const config = { agents: { stream: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], interactive: [STREAM, '--resume', '{session}'], format: 'claude' } } };
const CHANGING = ['create_task', 'start_session', 'send_message', 'restore_turn', 'commit_task', 'merge_task', 'queue_task', 'archive_task', 'kill_session', 'respond_to_approval', 'create_automation', 'run_automation', 'schedule_followup'];
const READING = ['list_projects', 'list_tasks', 'wait_for_session', 'get_session', 'get_output', 'get_changes', 'get_diff', 'list_turns', 'list_approvals', 'conflicts', 'list_queue', 'list_automations'];
// The tests that need a daemon share one, each with a project of its own.
const daemon = sharedAgentDaemon(config);

// First on the file's daemon: list_projects answers this test's project alone.
test('grove mcp: the tools and their schemas; a task from creation to archive through them; errors with their codes', async (t) => {
  const d = await daemon();
  const home = d.home;
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'stream', setup: ['echo prepared'] }), 'README.md': 'hello\n' } });
  const project = await addProject(d, repo);
  const client = await mcp(t, home);

  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), [...CHANGING, ...READING].sort());
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.ok((tool.description ?? '').length > 40, `${tool.name} says what it does`);
    assert.equal(tool.annotations?.destructiveHint, ['merge_task', 'queue_task', 'archive_task', 'kill_session'].includes(tool.name), tool.name);
    assert.equal(tool.annotations?.readOnlyHint, READING.includes(tool.name), tool.name);
  }
  // The daemon's own schemas: the task's name rule, the session's modes.
  const create = tools.find((x) => x.name === 'create_task')!.inputSchema as any;
  assert.deepEqual(create.required.sort(), ['name', 'project_id']);
  assert.equal(create.properties.name.maxLength, 200);
  const start = tools.find((x) => x.name === 'start_session')!.inputSchema as any;
  assert.deepEqual(start.properties.mode.anyOf.map((m: any) => m.const), ['read', 'edit', 'full']);

  assert.deepEqual((await call(client, 'list_projects')).map((p: any) => p.id), [project.id]);
  const task = await call(client, 'create_task', { project_id: project.id, name: 'mcp work' });
  assert.equal(task.status, 'ready', 'answered once setup has run');
  assert.deepEqual((await call(client, 'list_tasks', { project_id: project.id })).map((x: any) => x.id), [task.id]);

  const session = await call(client, 'start_session', { task_id: task.id, prompt: 'write:notes.txt=from the agent' });
  assert.equal(session.agent, 'stream');
  const waited = await call(client, 'wait_for_session', { session_id: session.id, timeout_s: 60 });
  assert.equal(waited.ended, true);
  assert.equal(waited.status, 'exited');
  assert.equal(waited.exit_code, 0);
  assert.equal(waited.result.text, 'got 4 arguments');
  const out = await call(client, 'get_output', { session_id: session.id, last: 2 });
  assert.equal(out.lines, 2);
  assert.match(out.text, /wrote notes\.txt/);
  assert.match(out.text, /"type":"result"/);
  const all = await call(client, 'get_output', { session_id: session.id, after: 0 });
  assert.equal(all.first_seq, 1);
  assert.equal(all.next, out.next);

  // A follow-up in the same conversation, then what the task changed.
  const again = await call(client, 'send_message', { session_id: session.id, prompt: 'write:more.txt=second turn' });
  assert.equal(again.parent_id, session.id);
  assert.equal((await call(client, 'wait_for_session', { session_id: again.id })).status, 'exited');
  // A follow-up for later (DESIGN §19): queued until its time, then the conversation goes on.
  const at = new Date(Date.now() + 2_000).toISOString();
  const later = await call(client, 'schedule_followup', { session_id: again.id, at, prompt: 'write:later.txt=third turn' });
  assert.deepEqual([later.status, later.not_before, later.parent_id], ['queued', at, again.id]);
  assert.equal((await call(client, 'schedule_followup', { session_id: again.id, at: 'tomorrow', prompt: 'x' })).error.code, 'SCHEDULE_INVALID');
  assert.equal((await call(client, 'wait_for_session', { session_id: later.id, timeout_s: 60 })).status, 'exited');
  const ranAt = JSON.parse((await call(client, 'get_output', { session_id: later.id, after: 0 })).text.split('\n')[0]).at;
  assert.ok(ranAt >= Date.parse(at), 'not before its time');
  const changes = await call(client, 'get_changes', { task_id: task.id });
  assert.deepEqual(changes.files.map((f: any) => [f.path, f.status]), [['later.txt', 'untracked'], ['more.txt', 'untracked'], ['notes.txt', 'untracked']]);
  const diff = await call(client, 'get_diff', { task_id: task.id, path: 'notes.txt' });
  assert.match(diff, /^\+from the agent$/m);
  assert.doesNotMatch(diff, /more\.txt/);
  assert.deepEqual(await call(client, 'conflicts', { project_id: project.id }), []);

  // Landed and archived.
  assert.equal((await call(client, 'merge_task', { task_id: task.id })).error.code, 'WORKTREE_DIRTY');
  await call(client, 'commit_task', { task_id: task.id, message: 'notes from the agent' });
  const merged = await call(client, 'merge_task', { task_id: task.id, strategy: 'squash', message: 'agent notes' });
  assert.equal(merged.base, 'main');
  assert.equal(readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'from the agent\n');
  assert.equal(git(repo, 'log', '-1', '--format=%s'), 'agent notes');
  assert.equal((await call(client, 'archive_task', { task_id: task.id })).status, 'archived');

  // Errors: the input's, checked against the schema before any call; the daemon's, with its code.
  const missing = await call(client, 'create_task', { project_id: project.id });
  assert.equal(missing.error.code, 'VALIDATION_FAILED');
  assert.match(missing.text, /name/);
  assert.equal((await call(client, 'start_session', { task_id: task.id, mode: 'sideways' })).error.code, 'VALIDATION_FAILED');
  assert.equal((await call(client, 'get_changes', { task_id: 'nope' })).error.code, 'VALIDATION_FAILED');
  const unknown = await call(client, 'get_changes', { task_id: crypto.randomUUID() });
  assert.equal(unknown.error.code, 'NOT_FOUND');
  assert.equal(unknown.error.status, 404);
  assert.equal((await call(client, 'get_changes', { task_id: task.id })).error.code, 'TASK_NOT_READY');
  assert.equal((await call(client, 'kill_session', { session_id: crypto.randomUUID() })).error.code, 'NOT_FOUND');
  assert.equal((await call(client, 'no_such_tool')).error.code, 'UNKNOWN_TOOL');
});

test('grove mcp --read-only offers no tool that changes anything; without a daemon a tool says so at once', async (t) => {
  const home = makeHome(t);
  const client = await mcp(t, home, ['--read-only']);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), [...READING].sort());
  assert.ok(tools.every((x) => x.annotations?.readOnlyHint === true && x.annotations?.destructiveHint === false));
  assert.equal((await call(client, 'create_task', { project_id: crypto.randomUUID(), name: 'x' })).error.code, 'UNKNOWN_TOOL');

  // No daemon runs on this home: a clear error, not a hang.
  const t0 = Date.now();
  const none = await call(client, 'list_projects');
  assert.equal(none.error.code, 'DAEMON_NOT_RUNNING');
  assert.match(none.text, /grove daemon is not running/);
  assert.ok(Date.now() - t0 < 10_000);
});

test('grove mcp: wait_for_session gives up after timeout_s with ended false, and lets go of its stream each time', async (t) => {
  const d = await daemon();
  const home = d.home;
  const project = await addProject(d, makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'stream' }) } }));
  const client = await mcp(t, home);
  const task = await call(client, 'create_task', { project_id: project.id, name: 'held' });
  const held = gate(t);
  const session = await call(client, 'start_session', { task_id: task.id, prompt: `wait:${held.path}` });
  // More waits than the client has connections: one that kept its stream would starve the rest.
  for (let i = 0; i < 6; i++) {
    const w = await call(client, 'wait_for_session', { session_id: session.id, timeout_s: 1 });
    assert.equal(w.ended, false);
    assert.ok(['starting', 'running'].includes(w.status), w.status);
  }
  // Still served; the daemon is shared, so its other projects are listed too.
  assert.equal((await call(client, 'list_projects')).filter((p: any) => p.id === project.id).length, 1);
  held.release();
  const done = await call(client, 'wait_for_session', { session_id: session.id, timeout_s: 60 });
  assert.equal(done.ended, true);
  assert.equal(done.status, 'exited');
});

test('grove mcp: wait_for_session and get_session say the calls the agent denied by itself in words; a turn without any says nothing of it', async (t) => {
  const d = await daemon();
  const project = await addProject(d, makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'stream' }) } }));
  const client = await mcp(t, d.home);
  const task = await call(client, 'create_task', { project_id: project.id, name: 'denied' });
  const session = await call(client, 'start_session', { task_id: task.id, prompt: 'deny:tee ran.txt </dev/null && echo done' });
  const waited = await call(client, 'wait_for_session', { session_id: session.id, timeout_s: 60 });
  assert.equal(waited.status, 'exited');
  assert.equal(waited.result.is_error, false, 'the agent called it a success');
  assert.equal(waited.denied, '1 call denied: Bash tee ran.txt </dev/null && echo done (the agent refused them by itself; the work they were for was not done)');
  assert.deepEqual(waited.result.denials, [{ tool: 'Bash', input: { command: 'tee ran.txt </dev/null && echo done', description: 'Run the command' } }]);
  const got = await call(client, 'get_session', { session_id: session.id });
  assert.deepEqual(got, waited);
  assert.equal(got.kind, 'agent');

  // Taken over in a terminal (this test's process stands in for grove takeover): the kind says so.
  const over = await d.socket('POST', `/api/sessions/${session.id}/takeover`, { body: { pid: process.pid } });
  assert.equal(over.status, 201, over.text);
  const running = await call(client, 'get_session', { session_id: over.json.session.id });
  assert.equal(running.kind, 'interactive');
  assert.equal(running.ended, false);
  await d.socket('POST', `/api/sessions/${over.json.session.id}/end`, { body: { exit_code: 0 } });
  const back = await call(client, 'wait_for_session', { session_id: over.json.session.id, timeout_s: 60 });
  assert.deepEqual([back.kind, back.ended, back.status, back.exit_code], ['interactive', true, 'exited', 0]);

  const plain = await call(client, 'start_session', { task_id: task.id, prompt: 'hello' });
  const ok = await call(client, 'wait_for_session', { session_id: plain.id, timeout_s: 60 });
  assert.equal(ok.status, 'exited');
  assert.equal('denied' in ok, false);
  assert.deepEqual(ok.result.denials, []);
  assert.equal((await call(client, 'get_session', { session_id: crypto.randomUUID() })).error.code, 'NOT_FOUND');
});

test('grove mcp: queue_task queues a task in its project\'s merge queue, list_queue shows it in order, and it lands', async (t) => {
  const d = await daemon();
  const held = gate(t);
  // The check waits for the gate: the entry can be read while it lands.
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'stream', check: [`read x < '${held.path}'`] }) } });
  const project = await addProject(d, repo);
  const client = await mcp(t, d.home);
  const task = await call(client, 'create_task', { project_id: project.id, name: 'queued by an agent' });
  const session = await call(client, 'start_session', { task_id: task.id, prompt: 'write:q.txt=queued' });
  await call(client, 'wait_for_session', { session_id: session.id, timeout_s: 60 });
  await call(client, 'commit_task', { task_id: task.id, message: 'q' });

  const entry = await call(client, 'queue_task', { task_id: task.id, strategy: 'squash' });
  assert.deepEqual([entry.task_id, entry.project_id, entry.base, entry.position, entry.strategy, entry.fix], [task.id, project.id, 'main', 1, 'squash', false]);
  assert.equal((await call(client, 'queue_task', { task_id: task.id })).error.code, 'ALREADY_QUEUED');
  assert.equal((await call(client, 'queue_task', { task_id: task.id, strategy: 'rebase' })).error.code, 'VALIDATION_FAILED');
  assert.equal((await call(client, 'queue_task', { task_id: crypto.randomUUID() })).error.code, 'NOT_FOUND');
  const listed = await call(client, 'list_queue', { project_id: project.id });
  assert.deepEqual(listed.map((e: any) => [e.task_id, e.position]), [[task.id, 1]]);
  held.release();
  await d.waitForLog((l) => l.msg === 'landed a queued task' && l.task === task.id, 60_000);
  assert.deepEqual(await call(client, 'list_queue', { project_id: project.id }), []);
  assert.equal(readFileSync(path.join(repo, 'q.txt'), 'utf8'), 'queued\n');
  assert.equal(git(repo, 'rev-list', '--count', 'main'), '2', 'one squashed commit on main');
});

test('grove mcp: a JSON-RPC line over 10 MiB is answered with an error and the next request is served', async (t) => {
  const home = makeHome(t);
  const child = spawn(process.execPath, [DAEMON_ENTRY, 'mcp'], { env: { ...process.env, GROVE_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.after(() => stopProcess(child, exited as Promise<number>));
  const answers = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(11 * 1024 * 1024) } });
  child.stdin!.write(`${huge}\n`);
  child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
  const first = JSON.parse((await answers.next()).value);
  assert.equal(first.id, null);
  assert.equal(first.error.code, -32600);
  assert.match(first.error.message, /longer than/);
  const second = JSON.parse((await answers.next()).value);
  assert.deepEqual(second, { jsonrpc: '2.0', id: 2, result: {} });
  assert.equal(child.exitCode, null, 'still serving');
});

test('grove mcp: get_output {last: 3} of a session of 300k lines reads only its end', async (t) => {
  const { d, task } = await readyTaskOn(await daemon(), t);
  const n = 300_000;
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `print:${n}` } });
  assert.equal(s.status, 201);
  await waitSessionEnd(d, s.json.id);
  const client = await mcp(t, d.home);
  const started = Date.now();
  const out = await call(client, 'get_output', { session_id: s.json.id, last: 3 });
  const ms = Date.now() - started;
  console.log(`get_output {last: 3} of ${n} lines took ${ms} ms`);
  assert.equal(out.first_seq, n - 2);
  assert.equal(out.next, n);
  assert.deepEqual(out.text.split('\n').map((l: string) => l.trim()), [`line ${n - 2}`, `line ${n - 1}`, `line ${n}`]);
  assert.ok(ms < 3000, `took ${ms} ms`);
  // The API's `last` reads from the end, and is not mixed with a page's `after`.
  const page = await d.socket('GET', `/api/sessions/${s.json.id}/output?last=2`);
  assert.deepEqual(page.json.lines.map((l: any) => l.seq), [n - 1, n]);
  const mixed = await d.socket('GET', `/api/sessions/${s.json.id}/output?last=2&after=5`);
  assert.equal(mixed.json.code, 'VALIDATION_FAILED');
});

test('grove mcp: wait_for_session returns when an approval is pending; list_approvals and respond_to_approval decide it', async (t) => {
  const d = await daemon();
  const { task } = await readyTaskOn(d, t);
  const client = await mcp(t, d.home);
  const held = gate(t);
  const session = await call(client, 'start_session', { task_id: task.id, prompt: `wait:${held.path}` });
  t.after(() => d.socket('DELETE', `/api/sessions/${session.id}`));
  const waiting = call(client, 'wait_for_session', { session_id: session.id, timeout_s: 60 });
  // Asked while the wait waits, as an agent's bridge does.
  const asked = (await d.socket('POST', `/api/sessions/${session.id}/approvals`, { body: { key: 'toolu_m1', tool: 'Bash', input: { command: 'make release' } } })).json;
  const w = await waiting;
  assert.equal(w.ended, false);
  assert.equal(w.waiting, 'approval');
  assert.deepEqual(w.approvals.map((a: any) => a.id), [asked.id]);
  // Already pending: it answers at once.
  assert.equal((await call(client, 'wait_for_session', { session_id: session.id, timeout_s: 60 })).waiting, 'approval');

  const listed = await call(client, 'list_approvals', { task_id: task.id });
  assert.deepEqual(listed.map((a: any) => [a.id, a.input.command]), [[asked.id, 'make release']]);
  const denied = await call(client, 'respond_to_approval', { approval_id: asked.id, decision: 'deny', message: 'wait for the tag' });
  assert.deepEqual(denied.verdict, { behavior: 'deny', message: 'wait for the tag' });
  assert.equal((await call(client, 'respond_to_approval', { approval_id: asked.id, decision: 'allow' })).error.code, 'APPROVAL_DECIDED');
  assert.deepEqual(await call(client, 'list_approvals', { task_id: task.id }), []);
  const after = await call(client, 'wait_for_session', { session_id: session.id, timeout_s: 1 });
  assert.equal(after.waiting, null);
  assert.equal(after.ended, false);
});
