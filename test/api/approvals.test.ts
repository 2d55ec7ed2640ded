// Approvals (DESIGN §15): asked through the ask API for a running fixture session (what a
// bridge does), listed, waited on, decided once; rules, remember, expiry, and a daemon restart.
// Most tests share one daemon, each in a project of its own; the restart test starts its own.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { AGENT, agentHome, gate, readSse, readyTaskOn, sharedAgentDaemon } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const USER_RULES = ['Bash(git status)'];
// A hook on both approval events appends each event (its JSON on stdin) to a file of the home.
const HOOK_LOG = 'approval-hooks.jsonl';
const HOOK = { on: ['approval.requested', 'approval.decided'], command: ['sh', '-c', `cat >> "$GROVE_HOME/${HOOK_LOG}"; echo >> "$GROVE_HOME/${HOOK_LOG}"`] };
// `resumable`: the fixture agent with a pinned session id, so that a follow-up can resume it.
const RESUMABLE = [AGENT, 'echo:{session}', '{prompt}'];
const daemon = sharedAgentDaemon({ allow: USER_RULES, hooks: [HOOK], agents: { resumable: { command: RESUMABLE, resume: RESUMABLE } } });

// A running session of the fixture agent in a project of its own (with `grove` as its
// .grove.json), held until the test ends.
async function running(t: TestContext, opts: { grove?: Record<string, unknown>; d?: TestDaemon; body?: Record<string, unknown> } = {}) {
  const on = await readyTaskOn(opts.d ?? (await daemon()), t, opts.grove ?? {});
  const s = await startHeld(t, on.d, on.task.id, opts.body);
  return { ...on, s };
}

async function startHeld(t: TestContext, d: TestDaemon, taskId: string, body: Record<string, unknown> = {}) {
  const g = gate(t);
  const r = await d.socket('POST', `/api/tasks/${taskId}/sessions`, { body: { prompt: `wait:${g.path}`, ...body } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  return r.json;
}

let keys = 0;
const bash = (command: string, key = `toolu_${++keys}`) => ({ key, tool: 'Bash', input: { command, description: 'run it' } });
const ask = (d: TestDaemon, sessionId: string, body: unknown) => d.socket('POST', `/api/sessions/${sessionId}/approvals`, { body });
const decide = (d: TestDaemon, id: string, body: unknown) => d.socket('POST', `/api/approvals/${id}`, { body });
const waitFor = (d: TestDaemon, id: string, s = 30) => d.socket('GET', `/api/approvals/${id}?wait=${s}`);

test('asked: pending with the whole input, the session waiting; asked again: the same one; allowed once; events on /api/events and to hooks', async (t) => {
  const { d, task, s } = await running(t);
  const input = { file_path: 'src/a.ts', old_string: 'a', new_string: 'b\n'.repeat(1000) };
  const r = await ask(d, s.id, { key: 'toolu_edit', tool: 'Edit', input });
  assert.equal(r.status, 201, r.text);
  const a = r.json;
  assert.equal(a.status, 'pending');
  assert.equal(a.kind, 'tool');
  assert.equal(a.session_id, s.id);
  assert.equal(a.task_id, task.id);
  assert.deepEqual(a.input, input, 'the whole input is stored and shown');
  assert.match(a.nonce, /^[0-9a-f]{32}$/);
  assert.equal(a.verdict, null);
  assert.equal(a.decided_at, null);
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.waiting, 'approval');

  const again = await ask(d, s.id, { key: 'toolu_edit', tool: 'Edit', input });
  assert.equal(again.status, 200, 'asking again with the same key finds the same approval');
  assert.equal(again.json.id, a.id);
  assert.equal(again.json.nonce, a.nonce);

  const pending = (await d.socket('GET', `/api/approvals?status=pending&task_id=${task.id}`)).json;
  assert.deepEqual(pending.map((x: any) => x.id), [a.id]);
  assert.deepEqual((await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json.map((x: any) => x.id), [a.id]);

  const ok = await decide(d, a.id, { nonce: a.nonce, decision: 'allow' });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.status, 'allowed');
  assert.deepEqual(ok.json.verdict, { behavior: 'allow', answer: null });
  assert.ok(ok.json.decided_at);
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.waiting, null);
  assert.deepEqual((await waitFor(d, a.id)).json.verdict, { behavior: 'allow', answer: null }, 'a decided one answers at once');
  assert.deepEqual((await d.socket('GET', `/api/approvals?status=pending&task_id=${task.id}`)).json, []);

  const events = (await d.socket('GET', `/api/events?task_id=${task.id}`)).json.events.filter((e: any) => e.type.startsWith('approval.'));
  assert.deepEqual(events.map((e: any) => [e.type, e.data.status, e.session_id]), [
    ['approval.requested', 'pending', s.id],
    ['approval.decided', 'allowed', s.id],
  ]);
  assert.deepEqual(events[0].data.input, input);
  // The session's waiting changes with its own event, after the approval's, in the same order.
  const all = (await d.socket('GET', `/api/events?task_id=${task.id}`)).json.events.filter((e: any) => e.type.startsWith('approval.') || e.type === 'session.waiting');
  assert.deepEqual(all.map((e: any) => `${e.type}:${e.type === 'session.waiting' ? e.data.waiting : e.data.status}`), [
    'approval.requested:pending',
    'session.waiting:approval',
    'approval.decided:allowed',
    'session.waiting:null',
  ]);
  assert.equal(all[1].data.id, s.id);

  // The hooks got both, with the approval as the API shows it.
  const hooked = await until(() => {
    const file = path.join(d.home, HOOK_LOG);
    const mine = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.data.id === a.id) : [];
    return mine.length === 2 ? mine : null;
  }, 'both approval events reach the hook');
  assert.deepEqual(hooked.map((e: any) => [e.type, e.data.status]), [['approval.requested', 'pending'], ['approval.decided', 'allowed']]);
});

test('denied with a message: a waiter already waiting gets it; the SSE stream carries both events', async (t) => {
  const { d, task, s } = await running(t);
  const a = (await ask(d, s.id, bash('rm -rf build'))).json;
  const stream = readSse(`http://localhost/api/events?task_id=${task.id}`, {
    socketPath: d.socketPath,
    until: (evs) => evs.some((e) => e.event === 'approval.decided'),
  });
  const waiting = waitFor(d, a.id);
  const r = await decide(d, a.id, { nonce: a.nonce, decision: 'deny', message: 'not the build folder' });
  assert.equal(r.status, 200, r.text);
  const w = await waiting;
  assert.equal(w.status, 200);
  assert.equal(w.json.status, 'denied');
  assert.deepEqual(w.json.verdict, { behavior: 'deny', message: 'not the build folder' });
  const evs = (await stream).filter((e) => e.event.startsWith('approval.'));
  assert.deepEqual(evs.map((e) => e.event), ['approval.requested', 'approval.decided']);
  assert.equal(evs[1]!.data.data.reason, 'not the build folder');
});

test('two clients answer at once: one 200, one 409 APPROVAL_DECIDED, and the first decision stands', async (t) => {
  const { d, s } = await running(t);
  for (let round = 0; round < 3; round++) {
    const a = (await ask(d, s.id, bash(`make round${round}`))).json;
    const [x, y] = await Promise.all([
      decide(d, a.id, { nonce: a.nonce, decision: 'allow' }),
      d.tcp('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'deny', message: 'no' } }),
    ]);
    assert.deepEqual([x.status, y.status].sort(), [200, 409], `${x.text} / ${y.text}`);
    const loser = x.status === 409 ? x : y;
    const winner = x.status === 200 ? x : y;
    assert.equal(loser.json.code, 'APPROVAL_DECIDED');
    assert.match(String(loser.headers['content-type']), /application\/problem\+json/);
    const now = (await d.socket('GET', `/api/approvals/${a.id}`)).json;
    assert.equal(now.status, winner.json.status);
    const events = (await d.socket('GET', `/api/events?task_id=${s.task_id}`)).json.events.filter((e: any) => e.type === 'approval.decided' && e.data.id === a.id);
    assert.equal(events.length, 1, 'decided once');
  }
});

test('a wrong nonce on a pending approval: 409 APPROVAL_STALE, and it stays pending; validation and unknown ids', async (t) => {
  const { d, s } = await running(t);
  const a = (await ask(d, s.id, bash('ls'))).json;
  const stale = await decide(d, a.id, { nonce: 'f'.repeat(32), decision: 'allow' });
  assert.equal(stale.status, 409);
  assert.equal(stale.json.code, 'APPROVAL_STALE');
  assert.equal((await d.socket('GET', `/api/approvals/${a.id}`)).json.status, 'pending');
  assert.equal((await decide(d, a.id, { nonce: a.nonce, decision: 'maybe' })).json.code, 'VALIDATION_FAILED');
  assert.equal((await decide(d, a.id, { nonce: a.nonce, decision: 'deny', remember: 'session' })).json.code, 'VALIDATION_FAILED');
  assert.equal((await decide(d, a.id, { nonce: a.nonce, decision: 'allow', answer: 'yes' })).json.code, 'VALIDATION_FAILED');
  assert.equal((await ask(d, s.id, { key: 'k', tool: 'Bash', input: {}, extra: 1 })).json.code, 'VALIDATION_FAILED');
  assert.equal((await ask(d, s.id, { tool: 'Bash', input: {} })).json.code, 'VALIDATION_FAILED');
  const nobody = '00000000-0000-4000-8000-000000000000';
  assert.equal((await decide(d, nobody, { nonce: 'x', decision: 'allow' })).status, 404);
  assert.equal((await d.socket('GET', `/api/approvals/${nobody}`)).status, 404);
  assert.equal((await ask(d, nobody, bash('ls'))).status, 404);
  assert.equal((await d.socket('GET', `/api/approvals?status=nope`)).json.code, 'VALIDATION_FAILED');
  assert.equal((await d.socket('GET', `/api/approvals/${a.id}?wait=61`)).json.code, 'VALIDATION_FAILED');
  const ok = await decide(d, a.id, { nonce: a.nonce, decision: 'allow' });
  assert.equal(ok.status, 200, 'the right nonce still decides it');
  assert.equal((await decide(d, a.id, { nonce: 'f'.repeat(32), decision: 'allow' })).json.code, 'APPROVAL_DECIDED', 'decided beats stale');
});

test("rules of .grove.json and of the user config allow at once, recorded as allowed by the rule; others wait", async (t) => {
  const { d, task, s } = await running(t, { grove: { allow: ['Bash(npm test:*)', 'WebFetch(domain:docs.rs)'] } });
  for (const [call, rule] of [
    [bash('npm test -- --grep x'), 'Bash(npm test:*)'],
    [bash('git status'), 'Bash(git status)'],
    [{ key: 'toolu_web', tool: 'WebFetch', input: { url: 'https://docs.rs/serde', prompt: 'read' } }, 'WebFetch(domain:docs.rs)'],
  ] as const) {
    const r = await ask(d, s.id, call);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status, 'allowed', JSON.stringify(call));
    assert.equal(r.json.reason, `allowed by the rule ${rule}`);
    assert.deepEqual(r.json.verdict, { behavior: 'allow', answer: null });
  }
  for (const call of [bash('npm test && rm -rf /'), bash('git push'), { key: 'toolu_web2', tool: 'WebFetch', input: { url: 'https://example.com/' } }]) {
    assert.equal((await ask(d, s.id, call)).json.status, 'pending', JSON.stringify(call));
  }
  const types = (await d.socket('GET', `/api/events?task_id=${task.id}`)).json.events.filter((e: any) => e.type.startsWith('approval.')).map((e: any) => `${e.type}:${e.data.status}`);
  assert.deepEqual(types, ['approval.decided:allowed', 'approval.decided:allowed', 'approval.decided:allowed', 'approval.requested:pending', 'approval.requested:pending', 'approval.requested:pending']);
});

test('remember session allows that command again in the session only; remember project in every session of the project', async (t) => {
  const { d, task, s } = await running(t);
  const other = await startHeld(t, d, task.id);
  const first = (await ask(d, s.id, bash('make lint'))).json;
  assert.equal((await decide(d, first.id, { nonce: first.nonce, decision: 'allow', remember: 'session' })).json.remember, 'session');
  const again = (await ask(d, s.id, bash('make lint'))).json;
  assert.equal(again.status, 'allowed');
  assert.equal(again.reason, 'allowed by the rule Bash(make lint)');
  assert.equal((await ask(d, s.id, bash('make lint && curl evil'))).json.status, 'pending', 'that exact command only');
  assert.equal((await ask(d, other.id, bash('make lint'))).json.status, 'pending', 'another session asks');

  const edit = (await ask(d, other.id, { key: 'toolu_e1', tool: 'Edit', input: { file_path: 'a.ts' } })).json;
  assert.equal((await decide(d, edit.id, { nonce: edit.nonce, decision: 'allow', remember: 'project' })).status, 200);
  const third = await startHeld(t, d, task.id);
  assert.equal((await ask(d, third.id, { key: 'toolu_e2', tool: 'MultiEdit', input: { file_path: 'b.ts' } })).json.status, 'allowed', 'Edit covers MultiEdit');
  const elsewhere = await running(t, { d });
  assert.equal((await ask(d, elsewhere.s.id, { key: 'toolu_e3', tool: 'Edit', input: { file_path: 'a.ts' } })).json.status, 'pending', 'another project asks');
});

test("remember session holds in the session's follow-ups (the agent's session they resume), not in another conversation of the task", async (t) => {
  const on = await readyTaskOn(await daemon(), t, {});
  const { d, task } = on;
  const g = gate(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'resumable', prompt: `wait:${g.path}` } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  const first = (await ask(d, r.json.id, bash('make check'))).json;
  assert.equal((await decide(d, first.id, { nonce: first.nonce, decision: 'allow', remember: 'session' })).status, 200);
  // A follow-up, queued behind the first turn, runs once it ends.
  const g2 = gate(t);
  const f = await d.socket('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: `wait:${g2.path}` } });
  assert.equal(f.status, 202, f.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${f.json.id}`).catch(() => {}));
  g.release();
  await until(async () => (await d.socket('GET', `/api/sessions/${f.json.id}`)).json.status === 'running', 'the follow-up running');
  const again = (await ask(d, f.json.id, bash('make check'))).json;
  assert.equal(again.status, 'allowed', 'the follow-up resumes the same agent session');
  assert.equal(again.reason, 'allowed by the rule Bash(make check)');
  const other = await startHeld(t, d, task.id);
  assert.equal((await ask(d, other.id, bash('make check'))).json.status, 'pending', 'a new conversation asks');
});

test('a question: never allowed by a rule, answered with text', async (t) => {
  const { d, s } = await running(t, { grove: { allow: ['AskUserQuestion'] } });
  const q = await ask(d, s.id, { key: 'toolu_q', kind: 'question', tool: 'AskUserQuestion', input: { questions: [{ question: 'Which database?' }] } });
  assert.equal(q.status, 201);
  assert.equal(q.json.kind, 'question');
  assert.equal(q.json.status, 'pending');
  assert.equal((await decide(d, q.json.id, { nonce: q.json.nonce, decision: 'allow' })).json.code, 'VALIDATION_FAILED', 'a question needs its answer');
  assert.equal((await decide(d, q.json.id, { nonce: q.json.nonce, decision: 'allow', answer: 'x', remember: 'project' })).json.code, 'VALIDATION_FAILED');
  const r = await decide(d, q.json.id, { nonce: q.json.nonce, decision: 'allow', answer: 'PostgreSQL' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.answer, 'PostgreSQL');
  assert.deepEqual(r.json.verdict, { behavior: 'allow', answer: 'PostgreSQL' });
});

test("approval_timeout_s (the session body's, else .grove.json's) expires it with \"no decision within N s\", never a refusal", async (t) => {
  const { d, task, s } = await running(t, { grove: { approval_timeout_s: 1 } });
  const viaProject = (await ask(d, s.id, bash('sleep 1'))).json;
  assert.ok(viaProject.expires_at, 'a deadline is shown');
  const w = await waitFor(d, viaProject.id);
  assert.equal(w.json.status, 'expired');
  assert.equal(w.json.reason, 'no decision within 1 s');
  assert.deepEqual(w.json.verdict, { behavior: 'expired', message: 'no decision within 1 s' });
  assert.equal((await decide(d, viaProject.id, { nonce: viaProject.nonce, decision: 'allow' })).json.code, 'APPROVAL_DECIDED');
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.waiting, null);

  const own = await startHeld(t, d, task.id, { approval_timeout_s: 2 });
  const viaBody = (await ask(d, own.id, bash('sleep 2'))).json;
  const w2 = await waitFor(d, viaBody.id);
  assert.deepEqual(w2.json.verdict, { behavior: 'expired', message: 'no decision within 2 s' });
  assert.ok(Date.parse(w2.json.decided_at) - Date.parse(w2.json.created_at) >= 2000);

  const none = await running(t);
  assert.equal((await ask(d, none.s.id, bash('x'))).json.expires_at, null, 'without a timeout it waits');
  assert.equal((await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'x', approval_timeout_s: 0 } })).json.code, 'VALIDATION_FAILED');
});

test('a session that ends expires its pending approvals (its decided ones stay); an ended session cannot ask', async (t) => {
  const { d, s } = await running(t);
  const done = (await ask(d, s.id, bash('a'))).json;
  await decide(d, done.id, { nonce: done.nonce, decision: 'deny' });
  const open = (await ask(d, s.id, bash('b'))).json;
  const waiting = waitFor(d, open.id);
  assert.equal((await d.socket('DELETE', `/api/sessions/${s.id}`)).status, 200);
  const w = (await waiting).json;
  assert.equal(w.status, 'expired');
  assert.equal(w.verdict.behavior, 'expired');
  assert.match(w.verdict.message, /no decision: the session ended \(killed\)/);
  const kept = (await d.socket('GET', `/api/approvals/${done.id}`)).json;
  assert.deepEqual(kept.verdict, { behavior: 'deny', message: 'The user denied this.' });
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.waiting, null);
  const late = await ask(d, s.id, bash('c'));
  assert.equal(late.status, 409);
  assert.equal(late.json.code, 'SESSION_NOT_RUNNING');
  const reconnect = await ask(d, s.id, bash('b', open.key));
  assert.equal(reconnect.status, 200, 'a bridge asking again with its key learns the verdict');
  assert.equal(reconnect.json.status, 'expired');
});

test('pending approvals survive a daemon restart: the same nonce, its deadline armed again, and a waiter gets its answer after it', async (t) => {
  const home = agentHome(t);
  const d = await startDaemon(t, { home });
  const { task, s } = await running(t, { d });
  const other = await startHeld(t, d, task.id, { approval_timeout_s: 8 });
  const a = (await ask(d, s.id, bash('make deploy'))).json;
  const timed = (await ask(d, other.id, bash('make slow'))).json;
  await d.stop();

  const d2 = await startDaemon(t, { home });
  const after = (await d2.socket('GET', `/api/approvals/${a.id}`)).json;
  assert.equal(after.status, 'pending');
  assert.equal(after.nonce, a.nonce);
  assert.equal((await d2.socket('GET', `/api/sessions/${s.id}`)).json.waiting, 'approval');
  try {
    // The bridge asks again with its key after the restart, finds its approval, and waits.
    const again = await ask(d2, s.id, bash('make deploy', a.key));
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.id, a.id);
    const waiting = waitFor(d2, a.id);
    const r = await decide(d2, a.id, { nonce: a.nonce, decision: 'allow' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual((await waiting).json.verdict, { behavior: 'allow', answer: null });
    const t2 = (await waitFor(d2, timed.id)).json;
    assert.deepEqual(t2.verdict, { behavior: 'expired', message: 'no decision within 8 s' }, 'the deadline of the first daemon, armed by the second');
  } finally {
    // The sessions outlived the first daemon: the second one ends them.
    for (const id of [s.id, other.id]) await d2.socket('DELETE', `/api/sessions/${id}`);
  }
});
