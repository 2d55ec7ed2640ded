import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { agentHome, allEvents, allLines, gate, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { grove } from '../helpers/cli.ts';

const daemon = sharedAgentDaemon();

const FILES = { '.grove.json': JSON.stringify({ agent: 'fixture' }), 'f.txt': 'one\ntwo\nthree\n', 'g.txt': 'g\n' };

// A project whose .grove.json names the fixture agent, and a way to make ready tasks in it.
async function project(t: test.TestContext, d: TestDaemon) {
  const repo = makeRepo(t, { files: FILES });
  const p = await addProject(d, repo);
  const task = async (name: string, more: Record<string, unknown> = {}) => {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name, ...more } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status, 'ready');
    return { ...r.json, wt: path.join(repo, r.json.worktree_path) };
  };
  return { repo, p, task };
}

function commitFile(dir: string, file: string, text: string): string {
  writeFileSync(path.join(dir, file), text);
  git(dir, 'add', file);
  git(dir, 'commit', '-qm', `edit ${file}`);
  return git(dir, 'rev-parse', 'HEAD');
}

// A task with a commit of its own, merged into its base.
async function landed(d: TestDaemon, task: { id: string; wt: string }, file: string, strategy = 'merge') {
  commitFile(task.wt, file, `${file} of ${task.id}\n`);
  const m = await d.socket('POST', `/api/tasks/${task.id}/merge`, { body: { strategy } });
  assert.equal(m.status, 200, m.text);
}

// A task with a commit, and a task stacked on its branch with a commit of its own.
async function stackedPair(t: test.TestContext, d: TestDaemon, bottomFile: [string, string], stackedFile: [string, string]) {
  const { repo, task } = await project(t, d);
  const a = await task('bottom');
  commitFile(a.wt, ...bottomFile);
  const s = await task('stacked', { base: a.branch });
  const tip = commitFile(s.wt, ...stackedFile);
  return { repo, a, s, tip };
}

// The task.status event of the stacked task's restack.
const restackEvent = (d: TestDaemon, id: string) =>
  until(async () => (await allEvents(d, `&task_id=${id}`)).find((e) => e.type === 'task.status' && e.data.restack), 'the restack event', 30_000);

const session = async (d: TestDaemon, id: string) => (await d.socket('GET', `/api/sessions/${id}`)).json;

// The daemon's sweep after the given merge looked at the session and left it waiting for `pending`.
const stillWaits = (d: TestDaemon, id: string, pending: string[]) =>
  d.waitForLog((l) => l.msg === 'session still waits' && l.session === id && JSON.stringify(l.waiting) === JSON.stringify(pending), 30_000);

test('a task after two others: made at once, its session queued until both merged (still queued after the first), then it runs', async (t) => {
  const d = await daemon();
  const { task } = await project(t, d);
  const a = await task('first');
  const b = await task('second');
  const c = await d.socket('POST', '/api/tasks', { body: { project_id: a.project_id, name: 'after both', after: [a.id, b.id], session: { prompt: 'echo:after both' } } });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.json.status, 'ready', 'the task itself is made at once');
  assert.ok(existsSync(path.join(path.dirname(a.wt), path.basename(c.json.worktree_path))));
  const s = c.json.session;
  assert.equal(s.status, 'queued');
  assert.equal(s.task_id, c.json.id);
  assert.deepEqual(s.after, [a.id, b.id], 'what it waits for');
  assert.equal((await session(d, s.id)).status, 'queued');

  await landed(d, a, 'a.txt');
  await stillWaits(d, s.id, [b.id]);
  assert.equal((await session(d, s.id)).status, 'queued', 'one of two merged: it waits on');

  await landed(d, b, 'b.txt');
  await waitSessionEnd(d, s.id);
  const done = await session(d, s.id);
  assert.equal(done.status, 'exited');
  assert.deepEqual((await allLines(d, s.id)).map((l) => l.text), ['after both']);
});

test('session without after starts as soon as the task is ready, in the same answer', async (t) => {
  const d = await daemon();
  const { p } = await project(t, d);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'at once', session: { prompt: 'echo:now' } } });
  assert.equal(r.status, 201, r.text);
  assert.notEqual(r.json.session.status, 'queued');
  await waitSessionEnd(d, r.json.session.id);
  assert.equal((await session(d, r.json.session.id)).status, 'exited');
});

test('one task of after archived unmerged: the waiting session ends failed, naming it', async (t) => {
  const d = await daemon();
  const { task } = await project(t, d);
  const a = await task('merged one');
  const b = await task('abandoned one');
  const c = await d.socket('POST', '/api/tasks', { body: { project_id: a.project_id, name: 'waits', after: [a.id, b.id], session: { prompt: 'echo:never' } } });
  assert.equal(c.status, 201, c.text);
  const id = c.json.session.id;
  await landed(d, a, 'a.txt');
  await stillWaits(d, id, [b.id]);
  const del = await d.socket('DELETE', `/api/tasks/${b.id}?force=true`);
  assert.equal(del.status, 200, del.text);
  const failed = await until(async () => ((s) => s.status !== 'queued' && s)(await session(d, id)), 'the waiting session to end');
  assert.equal(failed.status, 'failed');
  assert.equal(failed.pid, null, 'nothing ran');
  const [line] = await allLines(d, id);
  assert.match(line.text, new RegExp(`task abandoned one \\(${b.id}\\) was archived without being merged`));
});

test('bad input: unknown or archived tasks in after 422, after without session 400, a bad agent 422; nothing made', async (t) => {
  const d = await daemon();
  const { repo, p, task } = await project(t, d);
  const gone = await task('gone');
  assert.equal((await d.socket('DELETE', `/api/tasks/${gone.id}`)).status, 200);
  // Merged, then archived: nothing to wait for, and the bad input says 422 for it too.
  const done = await task('done');
  await landed(d, done, 'done.txt');
  assert.equal((await d.socket('DELETE', `/api/tasks/${done.id}`)).status, 200);
  const before = { tasks: (await d.socket('GET', `/api/tasks?project_id=${p.id}`)).json.length, branches: git(repo, 'branch', '--list'), worktrees: readdirSync(path.join(repo, '.grove', 'worktrees')) };
  const unknown = '00000000-0000-4000-8000-00000000abcd';
  const cases: [object, number, string, RegExp?][] = [
    [{ after: [unknown], session: { prompt: 'echo:x' } }, 422, 'AFTER_INVALID', new RegExp(unknown)],
    [{ after: [gone.id], session: { prompt: 'echo:x' } }, 422, 'AFTER_INVALID', /gone .*is archived/],
    [{ after: [done.id], session: { prompt: 'echo:x' } }, 422, 'AFTER_INVALID', /done .*is archived/],
    [{ after: [unknown] }, 400, 'VALIDATION_FAILED'],
    [{ after: [], session: { prompt: 'echo:x' } }, 400, 'VALIDATION_FAILED'],
    [{ session: {} }, 400, 'VALIDATION_FAILED'],
    [{ session: { prompt: 'echo:x', agent: 'nosuchagent' } }, 422, 'UNKNOWN_AGENT'],
  ];
  for (const [extra, status, code, detail] of cases) {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'bad', ...extra } });
    assert.equal(r.status, status, `${JSON.stringify(extra)}: ${r.text}`);
    assert.match(r.headers['content-type'] as string, /application\/problem\+json/);
    assert.equal(r.json.code, code, JSON.stringify(extra));
    if (detail) assert.match(r.json.detail, detail);
  }
  // A session's refusal names its field inside `session`, where the request has it.
  const mode = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'bad', session: { prompt: 'echo:x', mode: 'full' } } });
  assert.deepEqual([mode.status, mode.json.code, mode.json.errors?.map((e: { path: string }) => e.path)], [422, 'MODE_UNSUPPORTED', ['/session/mode']], mode.text);
  assert.equal((await d.socket('GET', `/api/tasks?project_id=${p.id}`)).json.length, before.tasks, 'no task row');
  assert.equal(git(repo, 'branch', '--list'), before.branches, 'no branch');
  assert.deepEqual(readdirSync(path.join(repo, '.grove', 'worktrees')), before.worktrees, 'no worktree');
});

test('a stacked task is restacked onto its base once the task it stacks on merges: on the base tip, its own commits kept, its base now that base', async (t) => {
  const d = await daemon();
  const { repo, a, s, tip: own } = await stackedPair(t, d, ['a.txt', 'a\n'], ['s.txt', 's\n']);
  assert.equal(s.base, a.branch);
  // Squashed: the bottom's own commit is not on main, so only the stacked task's commit may be replayed.
  const m = await d.socket('POST', `/api/tasks/${a.id}/merge`, { body: { strategy: 'squash' } });
  assert.equal(m.status, 200, m.text);
  const ev = await restackEvent(d, s.id);
  assert.equal(ev.data.restack.status, 'restacked', JSON.stringify(ev.data.restack));
  assert.equal(ev.data.restack.task_id, a.id);
  const main = git(repo, 'rev-parse', 'main');
  assert.equal(git(s.wt, 'rev-parse', 'HEAD^'), main, "its one commit sits on main's tip");
  assert.equal(git(s.wt, 'log', '-1', '--format=%s'), 'edit s.txt');
  assert.equal(git(s.wt, 'diff', own, 'HEAD', '--', 's.txt'), '', 'its own change kept');
  const now = (await d.socket('GET', `/api/tasks/${s.id}`)).json;
  assert.equal(now.base, 'main');
  assert.equal(now.base_commit, main);
  assert.equal(git(s.wt, 'status', '--porcelain'), '');
});

test('a restack that conflicts: a task.status event with the files, the branch and base as they were, no rebase left', async (t) => {
  const d = await daemon();
  const { repo, a, s, tip } = await stackedPair(t, d, ['g.txt', 'g of the bottom\n'], ['f.txt', 'stacked\ntwo\nthree\n']);
  commitFile(repo, 'f.txt', 'main\ntwo\nthree\n');
  const m = await d.socket('POST', `/api/tasks/${a.id}/merge`, { body: {} });
  assert.equal(m.status, 200, m.text);
  const ev = await restackEvent(d, s.id);
  assert.equal(ev.data.restack.status, 'failed');
  assert.equal(ev.data.restack.code, 'CONFLICT');
  assert.deepEqual(ev.data.restack.files, ['f.txt']);
  assert.equal(git(s.wt, 'rev-parse', 'HEAD'), tip, 'the branch as it was');
  assert.equal(git(s.wt, 'status', '--porcelain'), '');
  const gitDir = git(s.wt, 'rev-parse', '--path-format=absolute', '--git-dir');
  assert.ok(!existsSync(path.join(gitDir, 'rebase-merge')) && !existsSync(path.join(gitDir, 'rebase-apply')), 'no rebase left');
  assert.equal((await d.socket('GET', `/api/tasks/${s.id}`)).json.base, a.branch);
});

test('across a restart: a waiting session stays queued through it, and starts when its task merges after', async (t) => {
  const home = agentHome(t);
  let d = await startDaemon(t, { home });
  const { task } = await project(t, d);
  const a = await task('first');
  const c = await d.socket('POST', '/api/tasks', { body: { project_id: a.project_id, name: 'waits', after: [a.id], session: { prompt: 'echo:after restart' } } });
  assert.equal(c.status, 201, c.text);
  const id = c.json.session.id;
  await d.stop();
  d = await startDaemon(t, { home });
  await stillWaits(d, id, [a.id]);
  assert.equal((await session(d, id)).status, 'queued', 'the restart neither started nor failed it');
  await landed(d, a, 'a.txt');
  await waitSessionEnd(d, id);
  assert.equal((await session(d, id)).status, 'exited');
});

test('grove task new --after ID --prompt P: the task and its waiting session; --after without --prompt is a usage error', async (t) => {
  const d = await daemon();
  const { p, task } = await project(t, d);
  const a = await task('first');
  const made = await grove(d.home, ['task', 'new', p.id, 'from the cli', '--after', a.id, '--prompt', 'echo:cli', '--agent', 'fixture']);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, new RegExp(`^task from the cli \\(.+\\) is ready(?: on host \\S+)?: .*\\nsession (\\S+) \\(fixture\\) queued until ${a.id} merged\\n$`));
  const id = /session (\S+)/.exec(made.stdout)![1]!;
  assert.equal((await session(d, id)).status, 'queued');
  const bad = await grove(d.home, ['task', 'new', p.id, 'no prompt', '--after', a.id]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--after needs --prompt/);
});

test('a restack waits for the agent session of the stacked task to end, then happens', async (t) => {
  const d = await daemon();
  const { repo, a, s, tip } = await stackedPair(t, d, ['a.txt', 'a\n'], ['s.txt', 's\n']);
  const g = gate(t);
  const run = await d.socket('POST', `/api/tasks/${s.id}/sessions`, { body: { prompt: `wait:${g.path}` } });
  assert.equal(run.status, 201, run.text);
  await landed(d, a, 'a2.txt');
  // The merge's sweep has passed the stacked task by: a task made after it is swept after it.
  const later = await d.socket('POST', '/api/tasks', { body: { project_id: a.project_id, name: 'later', session: { prompt: 'echo:x' } } });
  assert.equal(later.status, 201, later.text);
  assert.equal(git(s.wt, 'rev-parse', 'HEAD'), tip, 'not while its agent runs');
  assert.equal((await d.socket('GET', `/api/tasks/${s.id}`)).json.base, a.branch);
  g.release();
  await waitSessionEnd(d, run.json.id);
  const ev = await restackEvent(d, s.id);
  assert.equal(ev.data.restack.status, 'restacked');
  assert.equal(git(s.wt, 'rev-parse', 'HEAD^'), git(repo, 'rev-parse', 'main'));
});

test('wait:false with a setup: 202, the session queued while the task sets up, started once it is ready', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture', setup: ['echo prepared > prepared.txt'] }) } });
  const p = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'set up first', wait: false, session: { prompt: 'echo:after setup' } } });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.json.status, 'setting_up');
  assert.equal(r.json.session.status, 'queued');
  assert.deepEqual(r.json.session.after, []);
  await waitSessionEnd(d, r.json.session.id);
  assert.equal((await session(d, r.json.session.id)).status, 'exited');
  assert.ok(existsSync(path.join(repo, r.json.worktree_path, 'prepared.txt')), 'its setup ran');
  assert.deepEqual((await allLines(d, r.json.session.id)).map((l) => l.text), ['after setup']);
});
