// Automations through a real daemon (DESIGN §19): a seconds cron run on time with its task and
// session; a precheck that skips, and one whose output fills the prompt; overlap skipped; run now
// on a paused automation; a run that changed nothing archived; next_run_at in two zones; bad
// input refused with nothing stored; missed times folded after the daemon was down; a kill -9
// during a run, then the run followed to its end, never started twice.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { addProject, ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { agentHome, gate, sharedAgentDaemon } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

// Speaks Claude Code's stream-json: its end is a result with a cost and tokens.
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
// A hook on automation.run writes each event, a line each, into the daemon's home.
const HOOK_LOG = 'automation-hook.log';
const HOOK = { on: ['automation.run'], command: ['sh', '-c', `cat >> "$GROVE_HOME/${HOOK_LOG}"; echo >> "$GROVE_HOME/${HOOK_LOG}"`] };
const daemon = sharedAgentDaemon({ agents: { claudish: { command: [STREAM, '--', '{prompt}'], format: 'claude' } }, hooks: [HOOK] });

// A project of its own whose agent is the fixture (each prompt is one of its steps).
async function project(t: TestContext, d: TestDaemon) {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  return { repo, project: await addProject(d, repo) };
}

async function create(d: TestDaemon, body: object): Promise<any> {
  const r = await d.socket('POST', '/api/automations', { body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// The run once it has ended: skipped at once, or its end logged.
async function ended(d: TestDaemon, automationId: string, runId: string): Promise<any> {
  for (;;) {
    const run = (await runsOf(d, automationId)).find((x: any) => x.id === runId);
    if (run && run.ended_at !== null) return run;
    await d.waitForLog((l) => l.run === runId && /automation run (ended|skipped)/.test(l.msg ?? ''), 30_000);
  }
}

const runsOf = async (d: TestDaemon, id: string) => (await d.socket('GET', `/api/automations/${id}/runs`)).json as any[];

test('a seconds cron runs on time: a task named for it, its session with the prompt filled in, the run ended with the result and changes', async (t) => {
  const d = await daemon();
  const { repo, project: p } = await project(t, d);
  const a = await create(d, { project_id: p.id, name: 'nightly', schedule: { cron: '*/2 * * * * *', timezone: 'UTC' }, session: { prompt: 'write:ran.txt={date} {run_id}', agent: 'claudish' } });
  assert.equal(a.enabled, true);
  assert.deepEqual(a.schedule, { cron: '*/2 * * * * *', timezone: 'UTC' });
  assert.equal(Date.parse(a.next_run_at) % 2000, 0, 'the next even second');
  assert.ok(Date.parse(a.next_run_at) > Date.parse(a.created_at));
  const started = await d.waitForLog((l) => l.automation === a.id && l.msg === 'automation run started', 30_000);
  // Paused at once, so that one run is all there is to look at.
  const paused = await d.socket('PATCH', `/api/automations/${a.id}`, { body: { enabled: false } });
  assert.equal(paused.status, 200, paused.text);
  assert.equal(paused.json.next_run_at, null);
  const run = await ended(d, a.id, started.run);
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.equal(run.trigger, 'schedule');
  assert.equal(Date.parse(run.scheduled_for) % 2000, 0);
  assert.equal(run.missed, 0);
  const session = (await d.socket('GET', `/api/sessions/${run.session_id}`)).json;
  // How soon after its time is measured in bench/ (automations); here only that it was not early.
  assert.ok(Date.parse(session.created_at) >= Date.parse(run.scheduled_for), `not before its time: ${session.created_at} for ${run.scheduled_for}`);
  const date = run.scheduled_for.slice(0, 10);
  assert.equal(session.prompt, `write:ran.txt=${date} ${run.id}`);
  const task = (await d.socket('GET', `/api/tasks/${run.task_id}`)).json;
  assert.equal(task.name, `nightly ${date}`);
  assert.equal(task.status, 'ready', 'it left work: the task stays for review');
  assert.equal(readFileSync(path.join(repo, task.worktree_path, 'ran.txt'), 'utf8'), `${date} ${run.id}\n`);
  assert.deepEqual(run.changes, { files: 1, additions: 1, deletions: 0, commits: 0 });
  assert.deepEqual([run.result?.cost_usd, run.result?.input_tokens], [0.0125, 12], "the session's result is carried");
  // Another time may have been claimed (and skipped, overlapping) before the pause: the newest is the last.
  const shown = (await d.socket('GET', `/api/automations/${a.id}`)).json;
  assert.equal(shown.last_run.id, (await runsOf(d, a.id))[0].id);
  const types = ((await d.socket('GET', `/api/events?project_id=${p.id}&limit=1000`)).json.events as any[]).filter((e) => e.type === 'automation.run' && e.data.id === run.id).map((e) => e.data.status);
  assert.deepEqual(types, ['pending', 'running', 'running', 'succeeded'], 'an event per change');
  const hooked = await until(() => {
    const seen = readFileSync(path.join(d.home, HOOK_LOG), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.data.id === run.id);
    return seen.length === 4 && seen;
  }, 'the hook to see every change', 30_000);
  assert.deepEqual(hooked.map((e: any) => [e.type, e.data.status]).at(-1), ['automation.run', 'succeeded'], 'hooks see them');
});

test('a precheck that fails skips the run quietly with its output; one that passes fills {precheck_output}', async (t) => {
  const d = await daemon();
  const { project: p } = await project(t, d);
  const a = await create(d, {
    project_id: p.id,
    name: 'triage',
    schedule: { cron: '0 0 1 1 *' },
    precheck: 'echo "nothing in $(basename "$PWD")"; exit 3',
    session: { prompt: 'echo:found {precheck_output}' },
  });
  const r = await d.socket('POST', `/api/automations/${a.id}/runs`);
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.trigger, 'manual');
  const skipped = await ended(d, a.id, r.json.id);
  assert.equal(skipped.status, 'skipped');
  assert.equal(skipped.reason, 'precheck');
  assert.deepEqual(skipped.precheck, { exit_code: 3, output: `nothing in ${path.basename(p.path)}\n` });
  assert.equal(skipped.task_id, null, 'no task for a skipped run');

  await d.socket('PATCH', `/api/automations/${a.id}`, { body: { precheck: 'echo 3 issues' } });
  const again = (await d.socket('POST', `/api/automations/${a.id}/runs`)).json;
  const done = await ended(d, a.id, again.id);
  assert.equal(done.status, 'succeeded', JSON.stringify(done));
  assert.equal((await d.socket('GET', `/api/sessions/${done.session_id}`)).json.prompt, 'echo:found 3 issues\n');
});

test('overlap skip: a run while one runs is skipped; a run that changed nothing archives its task', async (t) => {
  const d = await daemon();
  const { project: p } = await project(t, d);
  const g = gate(t);
  const a = await create(d, { project_id: p.id, name: 'slow', schedule: { cron: '0 0 1 1 *' }, session: { prompt: `wait:${g.path}` } });
  const first = (await d.socket('POST', `/api/automations/${a.id}/runs`)).json;
  await d.waitForLog((l) => l.run === first.id && l.msg === 'automation run started');
  const second = await d.socket('POST', `/api/automations/${a.id}/runs`);
  assert.equal(second.status, 201);
  assert.deepEqual([second.json.status, second.json.reason], ['skipped', 'overlap']);
  g.release();
  const done = await ended(d, a.id, first.id);
  assert.equal(done.status, 'succeeded');
  assert.deepEqual(done.changes, { files: 0, additions: 0, deletions: 0, commits: 0 });
  const task = await d.waitForLog((l) => l.task === done.task_id && l.msg === 'task archived', 30_000).then(async () => (await d.socket('GET', `/api/tasks/${done.task_id}`)).json);
  assert.equal(task.status, 'archived', 'nothing changed: not on the board');
  assert.deepEqual((await runsOf(d, a.id)).map((r) => [r.id, r.status]), [[second.json.id, 'skipped'], [first.id, 'succeeded']], 'newest first');
});

test('land "queue": the run\'s work is committed and lands through the merge queue', async (t) => {
  const d = await daemon();
  const { repo, project: p } = await project(t, d);
  const a = await create(d, { project_id: p.id, name: 'tidy', schedule: { cron: '0 0 1 1 *' }, land: 'queue', session: { prompt: 'write:tidied.txt=tidy', agent: 'claudish' } });
  const run = (await d.socket('POST', `/api/automations/${a.id}/runs`)).json;
  const done = await ended(d, a.id, run.id);
  assert.equal(done.status, 'succeeded', JSON.stringify(done));
  await d.waitForLog((l) => l.task === done.task_id && l.msg === 'landed a queued task', 60_000);
  assert.equal(readFileSync(path.join(repo, 'tidied.txt'), 'utf8'), 'tidy\n', 'on main, in the checkout');
  const subject = execFileSync('git', ['-C', repo, 'log', '--format=%s', '-1', '--', 'tidied.txt'], { encoding: 'utf8' }).trim();
  assert.equal(subject, `tidy: automation run of ${done.scheduled_for.slice(0, 10)}`);
});

test('run now on a paused automation; removing it removes its runs, its tasks stay', async (t) => {
  const d = await daemon();
  const { project: p } = await project(t, d);
  const a = await create(d, { project_id: p.id, name: 'paused', enabled: false, schedule: { cron: '* * * * * *' }, session: { prompt: 'write:x.txt=1' } });
  assert.equal(a.next_run_at, null);
  const run = (await d.socket('POST', `/api/automations/${a.id}/runs`)).json;
  assert.equal(run.status, 'pending');
  const done = await ended(d, a.id, run.id);
  assert.equal(done.status, 'succeeded');
  assert.deepEqual((await runsOf(d, a.id)).map((r) => r.id), [run.id], 'paused: no scheduled run beside it');
  assert.equal((await d.socket('DELETE', `/api/automations/${a.id}`)).status, 204);
  assert.equal((await d.socket('GET', `/api/automations/${a.id}`)).json.code, 'NOT_FOUND');
  assert.equal((await d.socket('GET', `/api/automations/${a.id}/runs`)).status, 404);
  assert.equal((await d.socket('GET', `/api/tasks/${done.task_id}`)).json.status, 'ready');
});

test('next_run_at in two zones: 09:00 there', async (t) => {
  const d = await daemon();
  const { project: p } = await project(t, d);
  for (const timezone of ['America/New_York', 'Asia/Tokyo']) {
    const a = await create(d, { project_id: p.id, name: `morning ${timezone}`, schedule: { cron: '0 9 * * *', timezone }, session: { prompt: 'echo:hi' } });
    const next = new Date(a.next_run_at);
    const there = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hour12: false }).format(next);
    assert.equal(there, '09:00', `${timezone}: ${a.next_run_at}`);
    assert.ok(next.getTime() > Date.now() && next.getTime() - Date.now() <= 86_400_000 + 3_600_000, 'the next one, within a day');
  }
  const list = (await d.socket('GET', `/api/automations?project_id=${p.id}`)).json;
  assert.deepEqual(list.map((a: any) => a.schedule.timezone), ['America/New_York', 'Asia/Tokyo']);
});

test('bad input: 422 with the code and the field, and nothing stored', async (t) => {
  const d = await daemon();
  const { project: p } = await project(t, d);
  const base = { project_id: p.id, name: 'bad', schedule: { cron: '0 9 * * *' }, session: { prompt: 'echo:hi' } };
  const cases: Array<[object, number, string, string | null]> = [
    [{ schedule: { cron: '0 25 * * *' } }, 422, 'SCHEDULE_INVALID', '/schedule/cron'],
    [{ schedule: { cron: '0 9 * * *', timezone: 'Europe/Atlantis' } }, 422, 'SCHEDULE_INVALID', '/schedule/timezone'],
    [{ schedule: { at: '2020-01-01T00:00:00Z' } }, 422, 'SCHEDULE_INVALID', '/schedule/at'],
    [{ schedule: { at: 'next tuesday' } }, 422, 'SCHEDULE_INVALID', '/schedule/at'],
    [{ session: { prompt: 'x', agent: 'no-such-agent' } }, 422, 'UNKNOWN_AGENT', null],
    [{ session: { prompt: 'x', mode: 'sideways' } }, 400, 'VALIDATION_FAILED', '/session/mode'],
    // The fixture has no modes: `edit` only.
    [{ session: { prompt: 'x', mode: 'read' } }, 422, 'MODE_UNSUPPORTED', null],
    [{ missed: { policy: 'latest' } }, 400, 'VALIDATION_FAILED', '/missed'],
  ];
  for (const [change, status, code, where] of cases) {
    const r = await d.socket('POST', '/api/automations', { body: { ...base, ...change } });
    assert.equal(r.status, status, `${JSON.stringify(change)}: ${r.text}`);
    assert.match(r.headers['content-type'] as string, /application\/problem\+json/);
    assert.equal(r.json.code, code);
    if (where !== null) assert.ok(r.json.errors.some((e: any) => e.path.startsWith(where)), `${JSON.stringify(change)}: ${JSON.stringify(r.json.errors)}`);
  }
  assert.deepEqual((await d.socket('GET', `/api/automations?project_id=${p.id}`)).json, [], 'nothing stored');
  await create(d, base);
  assert.equal((await d.socket('POST', '/api/automations', { body: base })).json.code, 'AUTOMATION_EXISTS');
  const a = (await d.socket('GET', `/api/automations?project_id=${p.id}`)).json[0];
  const bad = await d.socket('PATCH', `/api/automations/${a.id}`, { body: { schedule: { cron: '99 * * * *' } } });
  assert.equal(bad.json.code, 'SCHEDULE_INVALID');
  assert.deepEqual((await d.socket('GET', `/api/automations/${a.id}`)).json.schedule, a.schedule, 'unchanged');
});

test('.grove.json automations: made when the project is added, changed and removed as the file changes; an entry that cannot be applied is left out', async (t) => {
  const d = await daemon();
  const nightly = { schedule: { cron: '0 3 * * *', timezone: 'UTC' }, session: { prompt: 'echo:nightly' } };
  const grove = (automations: object) => JSON.stringify({ agent: 'fixture', automations });
  const repo = makeRepo(t, { files: { '.grove.json': grove({ nightly, broken: { schedule: { cron: '0 3 * * 9' }, session: { prompt: 'x' } } }) } });
  const p = await addProject(d, repo);
  const list = async () => (await d.socket('GET', `/api/automations?project_id=${p.id}`)).json as any[];
  const [made] = await until(async () => ((l) => l.length > 0 && l)(await list()), 'the declared automation', 30_000);
  assert.deepEqual([made.name, made.source, made.schedule, made.session, made.overlap, made.next_run_at?.slice(11)], ['nightly', 'file', nightly.schedule, nightly.session, 'skip', '03:00:00.000Z']);
  assert.equal((await list()).length, 1, 'the broken entry is left out');
  await d.waitForLog((l) => l.project === p.id && l.name === 'broken' && l.code === 'SCHEDULE_INVALID');
  const byApi = await create(d, { project_id: p.id, name: 'by hand', schedule: { cron: '0 4 * * *' }, session: { prompt: 'echo:hand' } });

  // Changed: the prompt of one, a new one; the old schedule kept (an unchanged entry is not re-made).
  const changed = grove({ nightly: { ...nightly, session: { prompt: 'echo:changed' }, overlap: 'queue' }, weekly: { schedule: { cron: '0 5 * * 1', timezone: 'UTC' }, session: { prompt: 'echo:weekly' } } });
  const after = await until(async () => {
    writeFileSync(path.join(repo, '.grove.json'), changed);
    const l = await list();
    return l.length === 3 && l.find((a) => a.name === 'nightly')?.session.prompt === 'echo:changed' && l;
  }, 'the change applied', 30_000);
  const again = after.find((a: any) => a.name === 'nightly');
  assert.deepEqual([again.id, again.overlap, again.next_run_at], [made.id, 'queue', made.next_run_at], 'the same automation, changed');
  assert.equal(after.find((a: any) => a.name === 'weekly').source, 'file');

  // Removed from the file: removed from grove; the one made by hand stays.
  const removed = await until(async () => {
    writeFileSync(path.join(repo, '.grove.json'), grove({ weekly: { schedule: { cron: '0 5 * * 1', timezone: 'UTC' }, session: { prompt: 'echo:weekly' } } }));
    const l = await list();
    return !l.some((a) => a.name === 'nightly') && l;
  }, 'the removal applied', 30_000);
  assert.deepEqual(removed.map((a: any) => [a.name, a.source]), [['by hand', 'api'], ['weekly', 'file']]);
  assert.equal(removed[0].id, byApi.id);
});

test('missed times while the daemon was down: folded into one run, counted in `missed`', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t) });
  const { project: p } = await project(t, d);
  // overlap queue: a run the daemon may have begun before it stopped does not make the folded one skip.
  const a = await create(d, { project_id: p.id, name: 'every 2 s', schedule: { cron: '*/2 * * * * *', timezone: 'UTC' }, session: { prompt: 'write:m.txt=1' }, overlap: 'queue' });
  await d.stop();
  const downAt = Date.now();
  await delay(7_000);
  const again = await startDaemon(t, { home: d.home });
  const claimed = await again.waitForLog((l) => l.automation === a.id && l.msg === 'automation times claimed', 30_000);
  await again.socket('PATCH', `/api/automations/${a.id}`, { body: { enabled: false } });
  const [first] = claimed.runs;
  assert.equal(first.status, 'pending');
  assert.ok(first.missed >= 2, `folded: ${JSON.stringify(claimed.runs)}`);
  assert.ok(Date.parse(first.scheduled_for) > downAt, 'the latest missed time');
  const runs = await runsOf(again, a.id);
  assert.equal(runs.filter((r) => Date.parse(r.scheduled_for) > downAt && Date.parse(r.scheduled_for) < Date.parse(first.scheduled_for)).length, 0, 'the folded times made no run of their own');
  assert.equal((await ended(again, a.id, first.id)).status, 'succeeded');
});

test('a kill -9 during a run: after the restart the run is followed to its end, its session not started twice', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t) });
  const { project: p } = await project(t, d);
  const g = gate(t);
  const a = await create(d, { project_id: p.id, name: 'long', schedule: { cron: '0 0 1 1 *' }, session: { prompt: `wait:${g.path}` } });
  const run = (await d.socket('POST', `/api/automations/${a.id}/runs`)).json;
  await d.waitForLog((l) => l.run === run.id && l.msg === 'automation run started');
  await d.stop('SIGKILL');
  const again = await startDaemon(t, { home: d.home });
  g.release();
  const done = await ended(again, a.id, run.id);
  assert.equal(done.status, 'succeeded', JSON.stringify(done));
  const tasks = (await again.socket('GET', `/api/tasks?project_id=${p.id}`)).json as any[];
  assert.equal(tasks.length, 1, 'one task');
  assert.equal((await again.socket('GET', `/api/tasks/${tasks[0].id}/sessions`)).json.length, 1, 'one session');
});
