import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { addProject, makeHome, ROOT, startDaemon, type Cleanup, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { allLines, gate, readSse, waitSessionEnd } from '../helpers/sessions.ts';

// Speaks Claude Code's stream-json: its first line holds its session id and arguments (see the file).
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const RESUME = [STREAM, '--resume', '{session}', '--', '{prompt}'];
const AGENTS = {
  // pins the id at start, as Claude Code's --session-id
  pinned: { command: [STREAM, '--session-id', '{session}', '--', '{prompt}'], resume: RESUME, format: 'claude', modes: { read: ['--read-only'], edit: [], full: ['--yolo'] } },
  // prints its own, read from its output
  reads: { command: [STREAM, '--', '{prompt}'], resume: RESUME, format: 'claude' },
  // cannot continue a conversation
  oneshot: { command: [STREAM, '--', '{prompt}'], format: 'claude' },
  // its id is in a field it never prints
  mute: { command: [STREAM, '--', '{prompt}'], resume: RESUME, session_id_field: 'conversation' },
};

// A daemon with those agents and a ready task; `config` adds to the user config.
async function setup(t: Cleanup, config: Record<string, unknown> = {}) {
  const home = makeHome(t);
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: AGENTS, default_agent: 'pinned', ...config }));
  const d = await startDaemon(t, { home });
  const repo = makeRepo(t as TestContext);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'talk' } })).json;
  assert.equal(task.status, 'ready');
  return { d, repo, task };
}

// Most tests share one daemon; those that restart it have their own.
const cleanups: Array<() => unknown> = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
});
let shared: ReturnType<typeof setup> | null = null;
const sharedSetup = () => (shared ??= setup({ after: (fn) => cleanups.push(fn) }));

const get = async (d: TestDaemon, id: string) => (await d.socket('GET', `/api/sessions/${id}`)).json;
const ended = async (d: TestDaemon, id: string) => {
  await waitSessionEnd(d, id);
  return get(d, id);
};
// What the fixture said about itself in its first line.
const init = async (d: TestDaemon, id: string) => JSON.parse((await allLines(d, id))[0].text);

test('the agent session id, pinned or read from output; its result; follow-ups resume it in one conversation, listed by conversation_id', async () => {
  const { d, task } = await sharedSetup();
  const first = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: '- first', mode: 'read' } });
  assert.equal(first.status, 201, first.text);
  const pinned = first.json.agent_session_id;
  assert.match(pinned, /^[0-9a-f-]{36}$/, 'pinned before the agent runs');
  assert.equal(first.json.conversation_id, first.json.id);
  assert.equal(first.json.parent_id, null);
  const done = await ended(d, first.json.id);
  assert.equal(done.status, 'exited');
  assert.equal(done.agent_session_id, pinned);
  assert.equal((await init(d, first.json.id)).session_id, pinned, 'the agent got the pinned id');
  assert.deepEqual(done.result, { text: 'got 5 arguments', is_error: false, cost_usd: 0.0125, input_tokens: 12, output_tokens: 5, denials: [], blocked: [] });

  // A follow-up through the TCP front: the agent's resume command with that id, the mode kept.
  const second = await d.tcp('POST', `/api/sessions/${first.json.id}/messages`, { body: { prompt: '--version' } });
  assert.equal(second.status, 201, second.text);
  assert.equal(second.json.status, 'starting');
  assert.deepEqual(second.json.command, [STREAM, '--resume', pinned, '--read-only', '--', '--version']);
  assert.equal(second.json.conversation_id, first.json.id);
  assert.equal(second.json.parent_id, first.json.id);
  assert.equal(second.json.mode, 'read');
  assert.equal((await ended(d, second.json.id)).status, 'exited');
  // A mode given again wins; posting to an older session of the conversation continues after its newest.
  const third = await d.socket('POST', `/api/sessions/${first.json.id}/messages`, { body: { prompt: 'again\nand ✓', mode: 'full' } });
  assert.equal(third.status, 201, third.text);
  await ended(d, third.json.id);
  assert.deepEqual((await init(d, third.json.id)).argv, ['--resume', pinned, '--yolo', '--', 'again\nand ✓']);
  assert.equal(third.json.parent_id, second.json.id);

  // An agent that prints its id: read from its first line, then resumed with it.
  const other = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'reads', prompt: 'hi' } });
  assert.equal(other.json.agent_session_id, null, 'not known before the agent prints it');
  const read = (await ended(d, other.json.id)).agent_session_id;
  assert.equal(read, (await init(d, other.json.id)).session_id);
  const follow = await d.socket('POST', `/api/sessions/${other.json.id}/messages`, { body: { prompt: 'more' } });
  assert.equal(follow.status, 201, follow.text);
  assert.deepEqual(follow.json.command, [STREAM, '--resume', read, '--', 'more']);
  await ended(d, follow.json.id);

  const list = (await d.socket('GET', `/api/tasks/${task.id}/sessions?conversation_id=${first.json.id}`)).json;
  assert.deepEqual(list.map((s: any) => s.id), [first.json.id, second.json.id, third.json.id]);
  const all = (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json;
  assert.ok(all.length >= 5);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}/sessions?conversation_id=nope`)).json.code, 'VALIDATION_FAILED');
});

test('follow-ups wait their turn: queued (202) behind a running session, started in order, a queued one cancelled by DELETE never runs', async (t) => {
  const { d, task } = await sharedSetup();
  const g = gate(t);
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `wait:${g.path}` } })).json;
  const send = (prompt: string) => d.socket('POST', `/api/sessions/${first.id}/messages`, { body: { prompt } });
  const a = await send('one');
  const b = await send('two');
  const c = await send('three');
  for (const r of [a, b, c]) {
    assert.equal(r.status, 202, r.text);
    assert.equal(r.json.status, 'queued');
    assert.equal(r.json.pid, null);
  }
  assert.equal(b.json.parent_id, a.json.id, 'each continues the one before it');
  // Cancelled while queued: killed, and nothing ever ran.
  assert.deepEqual((await d.tcp('DELETE', `/api/sessions/${b.json.id}`)).json, { status: 'killed' });
  assert.equal((await get(d, b.json.id)).status, 'killed');
  // A follower of a queued session's output waits until it runs and ends.
  const stream = readSse(`http://localhost/api/sessions/${a.json.id}/output`, { socketPath: d.socketPath, until: (evs) => evs.some((e) => e.event === 'end') });

  g.release();
  const endA = await ended(d, a.json.id);
  const endC = await ended(d, c.json.id);
  assert.equal(endA.status, 'exited');
  assert.equal(endC.status, 'exited');
  const events = await stream;
  assert.equal(events.at(-1)!.data.status, 'exited');
  assert.ok(events.some((e) => e.event === 'line'));
  const startA = (await init(d, a.json.id)).at;
  const startC = (await init(d, c.json.id)).at;
  assert.ok(startA >= Date.parse((await get(d, first.id)).ended_at), 'the first follow-up started after the session it follows ended');
  assert.ok(startC >= Date.parse(endA.ended_at), 'in order');
  assert.equal((await get(d, b.json.id)).pid, null);
  assert.deepEqual(await allLines(d, b.json.id), [], 'the cancelled one printed nothing');
  assert.equal((await d.socket('DELETE', `/api/sessions/${b.json.id}`)).status, 200, 'cancelling again is the same answer');
});

test('follow-up errors, each problem+json with nothing started: unknown, malformed, no resume, no id captured, archived task, bad body', async () => {
  const { d, repo, task } = await sharedSetup();
  const count = async () => (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json.length;
  const oneshot = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'oneshot', prompt: 'x' } })).json;
  const mute = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'mute', prompt: 'x' } })).json;
  const pinned = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'x' } })).json;
  await Promise.all([oneshot, mute, pinned].map((s) => waitSessionEnd(d, s.id)));
  const before = await count();
  const cases: Array<[string, unknown, number, string]> = [
    [`/api/sessions/${crypto.randomUUID()}/messages`, { prompt: 'x' }, 404, 'NOT_FOUND'],
    ['/api/sessions/NOT-A-UUID/messages', { prompt: 'x' }, 400, 'INVALID_ID'],
    [`/api/sessions/${oneshot.id}/messages`, { prompt: 'x' }, 422, 'RESUME_UNSUPPORTED'],
    [`/api/sessions/${mute.id}/messages`, { prompt: 'x' }, 409, 'RESUME_UNAVAILABLE'],
    [`/api/sessions/${pinned.id}/messages`, { prompt: 'x', mode: 'turbo' }, 400, 'VALIDATION_FAILED'],
    [`/api/sessions/${pinned.id}/messages`, {}, 400, 'VALIDATION_FAILED'],
    [`/api/sessions/${pinned.id}/messages`, { prompt: '' }, 400, 'VALIDATION_FAILED'],
    [`/api/sessions/${pinned.id}/messages`, { prompt: '  \n ' }, 400, 'VALIDATION_FAILED'],
    [`/api/sessions/${pinned.id}/messages`, { prompt: 'x', agent: 'reads' }, 400, 'VALIDATION_FAILED'],
    [`/api/sessions/${pinned.id}/messages`, { prompt: 'é'.repeat(70_000) }, 400, 'VALIDATION_FAILED'],
    [`/api/sessions/${pinned.id}/messages`, { prompt: 'x', timeout_s: 0 }, 400, 'VALIDATION_FAILED'],
  ];
  for (const [url, body, status, code] of cases) {
    const r = await d.tcp('POST', url, { body });
    assert.equal(r.status, status, `${url} ${r.text}`);
    assert.match(r.headers['content-type'] as string, /^application\/problem\+json/);
    assert.equal(r.json.code, code, url);
  }
  assert.equal(await count(), before, 'no session was made');
  // The mode the agent lacks is refused before anything queues or runs.
  const modeless = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'reads', prompt: 'x' } })).json;
  await waitSessionEnd(d, modeless.id);
  assert.equal((await d.socket('POST', `/api/sessions/${modeless.id}/messages`, { body: { prompt: 'x', mode: 'full' } })).json.code, 'MODE_UNSUPPORTED');

  // An archived task's sessions cannot be continued.
  const project = (await d.socket('GET', `/api/tasks/${task.id}`)).json.project_id;
  const gone = (await d.socket('POST', '/api/tasks', { body: { project_id: project, name: 'gone' } })).json;
  const s = (await d.socket('POST', `/api/tasks/${gone.id}/sessions`, { body: { prompt: 'x' } })).json;
  await waitSessionEnd(d, s.id);
  assert.equal((await d.socket('DELETE', `/api/tasks/${gone.id}?force=true`)).status, 200);
  const r = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'x' } });
  assert.equal(r.status, 409);
  assert.equal(r.json.code, 'TASK_NOT_READY');
  assert.equal((await d.socket('GET', `/api/tasks/${gone.id}/sessions`)).json.length, 1);
  assert.ok(existsSync(repo));
});

test('timeout_s (body, else .grove.json): a session running longer is killed with timed_out; one that ends in time is not', async () => {
  const { d, task } = await sharedSetup();
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:60', timeout_s: 0.5 } });
  assert.equal(r.json.timeout_s, 0.5);
  const s = await ended(d, r.json.id);
  assert.equal(s.status, 'killed');
  assert.equal(s.timed_out, true);
  const quick = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'fine', timeout_s: 30 } });
  const q = await ended(d, quick.json.id);
  assert.equal(q.status, 'exited');
  assert.equal(q.timed_out, false);
  // From .grove.json when the body names none.
  const { repo } = await sharedSetup();
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ timeout_s: 0.5 }));
  try {
    const fromProject = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:60' } });
    assert.equal(fromProject.json.timeout_s, 0.5);
    assert.equal((await ended(d, fromProject.json.id)).timed_out, true);
  } finally {
    writeFileSync(path.join(repo, '.grove.json'), '{}');
  }
});

test('a usage limit ends the session failed with limit_resets_at; its follow-up "continue" starts no earlier than the reset, across a daemon restart', async (t) => {
  const { d, task } = await setup(t, { resume_prompt: 'go on' });
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'limit:6', timeout_s: 60 } });
  const s = await ended(d, r.json.id);
  assert.equal(s.status, 'failed');
  assert.ok(s.limit_resets_at, 'limit_resets_at set');
  assert.equal(s.result.is_error, true);
  const conversation = (await d.socket('GET', `/api/tasks/${task.id}/sessions?conversation_id=${s.id}`)).json;
  assert.equal(conversation.length, 2);
  const next = conversation[1];
  assert.equal(next.status, 'queued');
  assert.equal(next.prompt, 'go on');
  assert.equal(next.not_before, s.limit_resets_at);
  assert.equal(next.parent_id, s.id);
  assert.equal(next.timeout_s, 60);

  // The daemon stops before the reset; the next one starts the follow-up on time.
  await d.stop();
  const d2 = await startDaemon(t, { home: d.home });
  const done = await ended(d2, next.id);
  assert.equal(done.status, 'exited');
  const started = (await init(d2, next.id)).at;
  assert.ok(started >= Date.parse(s.limit_resets_at), `started ${started - Date.parse(s.limit_resets_at)} ms after the reset`);
  assert.deepEqual((await init(d2, next.id)).argv, ['--resume', s.agent_session_id, '--', 'go on']);
});

test('the older limit line; auto_resume false queues nothing; a timeout and a queued follow-up both outlive a daemon SIGKILL', async (t) => {
  const { d, task } = await setup(t, { auto_resume: false, timeout_s: 30 });
  const old = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'old-limit:3600' } });
  assert.equal(old.json.timeout_s, 30, "the user config's timeout_s");
  const s = await ended(d, old.json.id);
  assert.equal(s.status, 'failed');
  assert.ok(Date.parse(s.limit_resets_at) > Date.now() + 3500_000);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}/sessions?conversation_id=${s.id}`)).json.length, 1, 'nothing queued');

  const g = gate(t);
  const slow = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:60', timeout_s: 4 } })).json;
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `wait:${g.path}` } })).json;
  const queued = (await d.socket('POST', `/api/sessions/${first.id}/messages`, { body: { prompt: 'after' } })).json;
  assert.equal(queued.status, 'queued');
  assert.equal(await d.stop('SIGKILL'), 'SIGKILL');
  g.release();
  const d2 = await startDaemon(t, { home: d.home });
  const killed = await ended(d2, slow.id);
  assert.equal(killed.status, 'killed');
  assert.equal(killed.timed_out, true, 'the deadline was armed again');
  const done = await ended(d2, queued.id);
  assert.equal(done.status, 'exited');
  assert.deepEqual((await init(d2, queued.id)).argv, ['--resume', first.agent_session_id, '--', 'after']);
  assert.equal(readdirSync(path.join(d.home, 'data', 'sessions')).length, 4);
});

test('a scheduled follow-up (at): queued until its time, kept across a restart, then run in the conversation; a past or bare time refused', async (t) => {
  const { d, task } = await setup(t);
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'hello' } })).json;
  await ended(d, first.id);
  for (const [at, why] of [
    ['2020-01-01T00:00:00Z', /past/],
    ['2030-01-01T09:00:00', /offset/],
  ] as const) {
    const r = await d.socket('POST', `/api/sessions/${first.id}/messages`, { body: { prompt: 'later', at } });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.code, 'SCHEDULE_INVALID');
    assert.match(r.json.errors[0].message, why);
  }
  const at = new Date(Date.now() + 6_000).toISOString();
  const r = await d.socket('POST', `/api/sessions/${first.id}/messages`, { body: { prompt: 'later', at } });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual([r.json.status, r.json.not_before, r.json.conversation_id], ['queued', at, first.conversation_id]);
  // Kept across a restart: the next daemon starts it at its time, not before.
  await d.stop();
  const again = await startDaemon(t, { home: d.home });
  const done = await ended(again, r.json.id);
  assert.equal(done.status, 'exited', JSON.stringify(done));
  const said = await init(again, r.json.id);
  assert.ok(said.at >= Date.parse(at), `started at ${new Date(said.at).toISOString()}, asked for ${at}`);
  assert.equal(said.argv.at(-1), 'later');
  assert.ok(said.argv.includes('--resume'), 'the conversation resumed');
});
