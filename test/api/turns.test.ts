import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { agentHome, allEvents, gate, readSse, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const daemon = sharedAgentDaemon();

// `git status --porcelain=v2`, untrimmed (a line may start with a space).
const status = (wt: string) => execFileSync('git', ['-C', wt, 'status', '--porcelain=v2', '--untracked-files=all'], { encoding: 'utf8' });

// The worktree's index file, as bytes: a checkpoint must not write it.
function indexSha(wt: string): string {
  const index = git(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index');
  return createHash('sha256').update(readFileSync(index)).digest('hex');
}

// Every file of the worktree (ignored ones too) with its text, .git aside.
function files(wt: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(path.join(wt, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (rel === '.git') continue;
      if (e.isDirectory()) walk(rel);
      else out[rel] = readFileSync(path.join(wt, rel), 'utf8');
    }
  };
  walk('');
  return out;
}

async function taskWithFiles(t: test.TestContext, d: TestDaemon) {
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }), '.gitignore': '*.log\n', 'a.txt': 'a\n', 'b.txt': 'b\n' } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'turns' } })).json;
  assert.equal(task.status, 'ready');
  return { repo, task, wt: path.join(repo, task.worktree_path) };
}

// The fixture's steps in order: a request's args come before the prompt in its command.
const steps = (...all: string[]) => ({ prompt: all.at(-1), args: all.slice(0, -1) });

// An agent session of the fixture running `all`, to its end; the session as it ended.
async function turnOf(d: TestDaemon, taskId: string, all: string[]) {
  const s = await d.socket('POST', `/api/tasks/${taskId}/sessions`, { body: steps(...all) });
  assert.equal(s.status, 201, s.text);
  await waitSessionEnd(d, s.json.id);
  return (await d.socket('GET', `/api/sessions/${s.json.id}`)).json;
}

test('each agent session end records a turn (n counts per task) without touching the branch, the index or status; GET turns lists them; changes and diff between turns', async (t) => {
  const d = await daemon();
  const { task, wt } = await taskWithFiles(t, d);
  git(wt, 'status'); // any refresh of the index's stats is done before it is measured
  const head = git(wt, 'rev-parse', 'HEAD');
  const index = indexSha(wt);

  const one = await turnOf(d, task.id, ['write:a.txt=one', 'write:new.txt=untracked', 'rm:b.txt', 'write:debug.log=ignored']);
  assert.equal(one.status, 'exited');
  // Measured before anything else reads the worktree: the agent never touched the index either.
  assert.equal(indexSha(wt), index, 'the index file is byte for byte as it was');
  assert.equal(git(wt, 'rev-parse', 'HEAD'), head);
  assert.equal(git(wt, 'symbolic-ref', 'HEAD'), `refs/heads/${task.branch}`);
  assert.deepEqual(status(wt).split('\n').filter(Boolean).map((l) => l.replace(/ [0-7]{6} .*? (\S+)$/, ' $1')), ['1 .M N... a.txt', '1 .D N... b.txt', '? new.txt']);
  assert.deepEqual(one.turn, { n: 1, commit: git(wt, 'rev-parse', `refs/grove/turns/${task.id}/1`) });
  assert.deepEqual(git(wt, 'ls-tree', '-r', '--name-only', one.turn.commit).split('\n'), ['.gitignore', '.grove.json', 'a.txt', 'new.txt']);

  const two = await turnOf(d, task.id, ['write:a.txt=two', 'write:c.txt=c']);
  assert.deepEqual(two.turn, { n: 2, commit: git(wt, 'rev-parse', `refs/grove/turns/${task.id}/2`) });

  const turns = await d.socket('GET', `/api/tasks/${task.id}/turns`);
  assert.equal(turns.status, 200, turns.text);
  assert.deepEqual(
    turns.json.map((x: any) => [x.n, x.commit, x.session_id, x.restored, x.head, x.files]),
    [
      [1, one.turn.commit, one.id, null, head, 3],
      [2, two.turn.commit, two.id, null, head, 2],
    ],
  );

  const between = await d.socket('GET', `/api/tasks/${task.id}/changes?from=turn:1&to=turn:2`);
  assert.equal(between.status, 200, between.text);
  assert.deepEqual(between.json.files.map((f: any) => [f.path, f.status, f.additions, f.deletions]), [['a.txt', 'modified', 1, 1], ['c.txt', 'added', 1, 0]]);
  const sinceOne = await d.socket('GET', `/api/tasks/${task.id}/changes?from=turn:1`);
  assert.deepEqual(sinceOne.json.files.map((f: any) => [f.path, f.status]), [['a.txt', 'modified'], ['c.txt', 'untracked']]);
  const diff = await d.socket('GET', `/api/tasks/${task.id}/diff?from=turn:1&to=turn:2`);
  assert.equal(diff.status, 200, diff.text);
  assert.match(diff.text, /^-one\n\+two$/m);
  assert.match(diff.text, /^\+\+\+ b\/c\.txt$/m);
  assert.doesNotMatch(diff.text, /new\.txt|b\.txt/);
  // Default as before: the merge-base to the work.
  const all = await d.socket('GET', `/api/tasks/${task.id}/changes`);
  assert.deepEqual(all.json.files.map((f: any) => f.path), ['a.txt', 'b.txt', 'c.txt', 'new.txt']);
});

test('sessions of one task that end at once each record a turn of their own, numbered 1 to N', async (t) => {
  const d = await daemon();
  const { task, wt } = await taskWithFiles(t, d);
  const n = 10;
  // One gate for all: opened for reading and writing, so that no open blocks and every session
  // finds its line whenever it reads.
  const fifo = path.join(makeTempDir(t), 'gate');
  execFileSync('mkfifo', [fifo]);
  const fd = openSync(fifo, 'r+');
  t.after(() => closeSync(fd));
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: steps(`wait:${fifo}`, `write:s${i}.txt=${i}`) });
    assert.equal(s.status, 201, s.text);
    ids.push(s.json.id);
  }
  await until(async () => (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json.every((s: any) => s.status === 'running'), 'every session running');
  writeSync(fd, 'go\n'.repeat(n));
  await Promise.all(ids.map((id) => waitSessionEnd(d, id)));
  const ended = await Promise.all(ids.map(async (id) => (await d.socket('GET', `/api/sessions/${id}`)).json));
  assert.deepEqual(ended.map((s) => s.status), Array(n).fill('exited'));
  assert.deepEqual(ended.map((s) => s.turn?.n ?? null).sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i + 1));
  for (const s of ended) assert.equal(git(wt, 'rev-parse', `refs/grove/turns/${task.id}/${s.turn.n}`), s.turn.commit);
  const turns = (await d.socket('GET', `/api/tasks/${task.id}/turns`)).json;
  assert.deepEqual(new Set(turns.map((x: any) => x.session_id)), new Set(ids));
});

test('bad ranges and turns: 404 TURN_NOT_FOUND for a turn the task lacks, 400 for a malformed side, nothing changed', async (t) => {
  const d = await daemon();
  const { task, wt } = await taskWithFiles(t, d);
  await turnOf(d, task.id, ['write:a.txt=one']);
  const before = { status: status(wt), files: files(wt), refs: git(wt, 'for-each-ref') };
  for (const url of [`changes?from=turn:2`, `diff?to=turn:5`, `changes?from=turn:1&to=turn:3`]) {
    const r = await d.socket('GET', `/api/tasks/${task.id}/${url}`);
    assert.equal(r.status, 404, url);
    assert.equal(r.json.code, 'TURN_NOT_FOUND', url);
    assert.match(r.headers['content-type'] as string, /^application\/problem\+json/);
  }
  for (const url of ['changes?from=turn:0', 'changes?from=HEAD', 'diff?to=turn:x', 'changes?from=turn:1&extra=1']) {
    const r = await d.socket('GET', `/api/tasks/${task.id}/${url}`);
    assert.equal(r.status, 400, url);
    assert.equal(r.json.code, 'VALIDATION_FAILED', url);
  }
  const missing = await d.socket('POST', `/api/tasks/${task.id}/restore`, { body: { turn: 2 } });
  assert.equal(missing.status, 404);
  assert.equal(missing.json.code, 'TURN_NOT_FOUND');
  const bad = await d.socket('POST', `/api/tasks/${task.id}/restore`, { body: { turn: 'one' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.code, 'VALIDATION_FAILED');
  const unknown = await d.socket('GET', `/api/tasks/00000000-0000-4000-8000-000000000000/turns`);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.code, 'NOT_FOUND');
  assert.deepEqual({ status: status(wt), files: files(wt), refs: git(wt, 'for-each-ref') }, before);
});

test('restore: 409 while an agent runs; then the files, untracked ones as untracked, and the index of turn N after saving the present as a turn; its undo gives back the state byte for byte; the branch never moves; archive drops the refs', async (t) => {
  const d = await daemon();
  const { repo, task, wt } = await taskWithFiles(t, d);
  const one = await turnOf(d, task.id, ['write:a.txt=one', 'write:new.txt=untracked', 'rm:b.txt']);
  const atOne = { status: status(wt), files: files(wt) };
  // Later: a commit on the branch, then more work and an ignored file.
  git(wt, 'add', '-A');
  git(wt, 'commit', '-qm', 'agent work');
  const head = git(wt, 'rev-parse', 'HEAD');
  const running = gate(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: steps('write:a.txt=later', 'write:other.txt=other', 'rm:new.txt', 'write:debug.log=ignored', `wait:${running.path}`) });
  assert.equal(s.status, 201, s.text);
  // Refused from its start on: a starting session is an agent at work too.
  const refused = await d.socket('POST', `/api/tasks/${task.id}/restore`, { body: { turn: 1 } });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'SESSION_RUNNING');
  running.release();
  await waitSessionEnd(d, s.json.id);
  const later = { status: status(wt), files: files(wt) };
  assert.equal(later.files['debug.log'], 'ignored\n');

  const statusEvents = async () => (await allEvents(d, `&task_id=${task.id}`)).filter((e: any) => e.type === 'task.status').length;
  const eventsBefore = await statusEvents();
  const restored = await d.socket('POST', `/api/tasks/${task.id}/restore`, { body: { turn: 1 } });
  assert.equal(restored.status, 200, restored.text);
  assert.equal(restored.json.restored.n, 1);
  assert.equal(restored.json.restored.commit, one.turn.commit);
  assert.equal(restored.json.saved.n, 3, 'turn 2 is the session that ran meanwhile');
  assert.equal(restored.json.saved.restored, 1);
  assert.equal(restored.json.saved.session_id, null);
  assert.equal(git(wt, 'rev-parse', 'HEAD'), head, 'the branch never moves');
  // The files are turn 1's; the ignored file stays; other.txt, which turn 1 lacks, is gone.
  assert.deepEqual(files(wt), { ...atOne.files, 'debug.log': 'ignored\n' });
  // Against the new HEAD (which has turn 1's work committed) the index of turn 1 differs: status
  // shows it so, and new.txt untracked as it was.
  assert.match(status(wt), /^\? new\.txt$/m);
  assert.doesNotMatch(status(wt), /other\.txt/);
  assert.equal(await statusEvents(), eventsBefore + 1, 'a task.status event tells of the restore');

  const undo = await d.socket('POST', `/api/tasks/${task.id}/restore`, { body: { turn: 3 } });
  assert.equal(undo.status, 200, undo.text);
  assert.equal(undo.json.saved.n, 4);
  assert.deepEqual(files(wt), later.files);
  assert.equal(status(wt), later.status);
  assert.equal(git(wt, 'rev-parse', 'HEAD'), head);

  const listed = (await d.socket('GET', `/api/tasks/${task.id}/turns`)).json;
  assert.deepEqual(listed.map((x: any) => [x.n, x.restored]), [[1, null], [2, null], [3, 1], [4, 3]]);

  const archived = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(archived.status, 200, archived.text);
  assert.equal(git(repo, 'for-each-ref', `refs/grove/turns/${task.id}/`), '', 'the refs went with the task');
  assert.equal(git(repo, 'rev-parse', `refs/heads/${task.branch}`), head, 'the branch stays');
  assert.equal(existsSync(wt), false);
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/turns`)).json, []);
});

test('no turn for a service, for an agent the archive kills, or for one whose worktree is gone', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture', services: { idle: { command: 'exec sleep 600' } } }), 'a.txt': 'a\n' } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'no turns' } })).json;
  const svc = await d.socket('POST', `/api/tasks/${task.id}/services/idle`);
  assert.equal(svc.status, 201, svc.text);
  assert.equal((await d.socket('DELETE', `/api/sessions/${svc.json.id}`)).status, 200);
  assert.equal((await d.socket('GET', `/api/sessions/${svc.json.id}`)).json.turn, null);

  // Its folder deleted by hand while the agent runs: nothing to record.
  const gone = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'folder gone' } })).json;
  const held = gate(t);
  const s = await d.socket('POST', `/api/tasks/${gone.id}/sessions`, { body: steps('echo:waiting', `wait:${held.path}`) });
  assert.equal(s.status, 201, s.text);
  // Removed once the agent runs (a confined agent's sandbox is made after the 201, in its folder).
  await readSse(`http://localhost/api/sessions/${s.json.id}/output`, { socketPath: d.socketPath, until: (evs) => evs.some((e) => e.event === 'line') });
  rmSync(path.join(repo, gone.worktree_path), { recursive: true, force: true });
  held.release();
  await waitSessionEnd(d, s.json.id);
  assert.equal((await d.socket('GET', `/api/sessions/${s.json.id}`)).json.turn, null);

  const running = gate(t);
  const a = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: steps('write:a.txt=changed', `wait:${running.path}`) });
  assert.equal(a.status, 201, a.text);
  const archived = await d.socket('DELETE', `/api/tasks/${task.id}?force=true`);
  assert.equal(archived.status, 200, archived.text);
  const killed = (await d.socket('GET', `/api/sessions/${a.json.id}`)).json;
  assert.equal(killed.status, 'killed');
  assert.equal(killed.turn, null);
  assert.equal(git(repo, 'for-each-ref', 'refs/grove/turns/'), '');
});

test('every end of an agent records a turn: failed, killed, past its timeout, and ended while the daemon was down (recorded at its next start)', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t) });
  const { task, wt } = await taskWithFiles(t, d);
  const failed = await turnOf(d, task.id, ['write:a.txt=failed', 'exit:3']);
  assert.equal(failed.status, 'failed');
  assert.equal(failed.turn.n, 1);
  assert.equal(git(wt, 'show', `${failed.turn.commit}:a.txt`), 'failed');

  const held = gate(t);
  const k = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: steps('write:a.txt=killed', `wait:${held.path}`) });
  assert.equal(k.status, 201, k.text);
  await until(() => readFileSync(path.join(wt, 'a.txt'), 'utf8') === 'killed\n', 'the agent to write');
  assert.equal((await d.socket('DELETE', `/api/sessions/${k.json.id}`)).status, 200);
  const killed = (await d.socket('GET', `/api/sessions/${k.json.id}`)).json;
  assert.equal(killed.status, 'killed');
  assert.equal(killed.turn.n, 2);
  assert.equal(git(wt, 'show', `${killed.turn.commit}:a.txt`), 'killed');

  // Its bound counts from the spawn: room for a loaded machine to start it and let it write.
  const slow = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { ...steps('write:a.txt=slow', 'sleep:60'), timeout_s: 5 } });
  assert.equal(slow.status, 201, slow.text);
  await waitSessionEnd(d, slow.json.id);
  const timedOut = (await d.socket('GET', `/api/sessions/${slow.json.id}`)).json;
  assert.equal(timedOut.timed_out, true);
  assert.equal(timedOut.turn.n, 3);
  assert.equal(git(wt, 'show', `${timedOut.turn.commit}:a.txt`), 'slow');

  // The agent outlives the daemon and ends while it is down.
  const away = gate(t);
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: steps(`wait:${away.path}`, 'write:a.txt=while away') });
  assert.equal(r.status, 201, r.text);
  await d.stop();
  away.release();
  await until(() => existsSync(path.join(wt, 'a.txt')) && readFileSync(path.join(wt, 'a.txt'), 'utf8') === 'while away\n', 'the agent to write');
  const d2 = await startDaemon(t, { home: d.home });
  await until(async () => (await d2.socket('GET', `/api/sessions/${r.json.id}`)).json.status === 'exited', 'the session recorded as ended');
  const late = (await d2.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(late.turn.n, 4);
  assert.equal(git(wt, 'show', `${late.turn.commit}:a.txt`), 'while away');
});
