import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { gate, killAll, slowRepo } from '../helpers/kill.ts';
import { commitFile, newTask, settledCheckouts } from '../helpers/queue.ts';
import { allEvents } from '../helpers/sessions.ts';
import { consistentState, waitPidGone } from '../helpers/state.ts';
import { until } from '../helpers/store.ts';

// A restack (DESIGN §17) cut short by SIGKILL: after the next start, the stacked task is restacked
// (onto its parent's base, with its own commit only, the row saying so) without anyone asking.

const porcelain = (dir: string) => execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' });
const gitPath = (dir: string, what: string) => git(dir, 'rev-parse', '--path-format=absolute', '--git-path', what);

// A daemon on `repo`, a task with a commit of its own, a task stacked on its branch with one of
// its own, and main moved on meanwhile by a change and its revert: a restack replayed onto a branch
// restacked already would put those two commits of main on it again (they apply: git keeps them).
async function stackedPair(t: test.TestContext, repo = makeRepo(t, { files: { 'f.txt': 'f\n' } })) {
  const d = await startDaemon(t);
  const project = await addProject(d, repo);
  const bottom = await newTask(d, project.id, repo, 'bottom');
  commitFile(bottom.wt, 'bottom.txt', 'bottom\n');
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'stacked', base: bottom.branch } });
  assert.equal(r.status, 201, r.text);
  const stacked = { ...r.json, wt: path.join(repo, r.json.worktree_path) };
  const own = commitFile(stacked.wt, 'stacked.txt', 'stacked\n');
  commitFile(repo, 'f.txt', 'changed\n');
  commitFile(repo, 'f.txt', 'f\n', 'revert f.txt');
  return { d1: d, repo, project, bottom, stacked, own };
}

// The merge that sets the stacked task's restack off; the daemon is killed during the restack.
async function mergeBottom(d: TestDaemon, bottom: { id: string }): Promise<void> {
  const m = await d.socket('POST', `/api/tasks/${bottom.id}/merge`, { body: { strategy: 'merge' } });
  assert.equal(m.status, 200, m.text);
}

// The merge, then daemon and git killed where `g` holds the restack's rebase, its state folder left.
async function killMidRebase(d1: TestDaemon, repo: string, bottom: { id: string }, stacked: { wt: string }, g: ReturnType<typeof gate>): Promise<void> {
  g.arm();
  await mergeBottom(d1, bottom);
  await g.entered();
  await killAll(d1, repo);
  assert.ok(existsSync(gitPath(stacked.wt, 'rebase-merge')), 'the kill left a rebase in progress');
}

const restackEvents = async (d: TestDaemon, id: string) => (await allEvents(d, `&task_id=${id}`)).filter((e) => e.type === 'task.status' && e.data?.restack);

// After the restart: one restack, recorded once, the branch on main's tip with exactly its own
// commit, the row's base main, nothing of a rebase left; `outcome` is what the start did with
// the rebase the kill cut short.
async function restackedCleanly(d: TestDaemon, repo: string, s: Awaited<ReturnType<typeof stackedPair>>, outcome: 'undone' | 'finished') {
  const { stacked, bottom, own, project } = s;
  const [ev] = await until(async () => ((evs) => evs.length > 0 && evs)(await restackEvents(d, stacked.id)), 'the restack event', 60_000);
  assert.equal(ev.data.restack.status, 'restacked', JSON.stringify(ev.data.restack));
  assert.equal(ev.data.restack.task_id, bottom.id);
  const main = git(repo, 'rev-parse', 'main');
  assert.equal(ev.data.restack.head, git(stacked.wt, 'rev-parse', 'HEAD'));
  assert.deepEqual(git(stacked.wt, 'log', '--format=%s', 'main..HEAD').split('\n'), ['edit stacked.txt'], "exactly its own commit on main's tip");
  assert.equal(git(stacked.wt, 'rev-parse', 'HEAD^'), main);
  assert.equal(git(stacked.wt, 'diff', own, 'HEAD', '--', 'stacked.txt'), '', 'its own change kept');
  assert.equal(git(stacked.wt, 'symbolic-ref', 'HEAD'), `refs/heads/${stacked.branch}`);
  assert.equal(porcelain(stacked.wt), '');
  settledCheckouts(stacked.wt);
  const row = (await d.socket('GET', `/api/tasks/${stacked.id}`)).json;
  assert.equal(row.base, 'main');
  assert.equal(row.base_commit, main);
  assert.ok(d.logs.some((l) => l?.msg === 'put right a landing that was interrupted' && l.task === stacked.id && l.outcome === outcome), `the start ${outcome} the rebase`);
  assert.equal((await restackEvents(d, stacked.id)).length, 1, 'restacked once');
  assert.ok(!existsSync(path.join(d.home, 'data', 'journal', `${stacked.id}.rebase.json`)), 'no intent left');
  assert.deepEqual((await consistentState(d, repo, project.id)).problems, []);
}

test('daemon and git killed with SIGKILL while a restack rebase writes files: the next start aborts it and restacks the task', async (t) => {
  const { repo, gate: g } = slowRepo(t);
  const s = await stackedPair(t, repo);
  const { d1 } = s;
  // The restack's checkout of main's tip writes slow.txt, where git is held.
  commitFile(repo, 'slow.txt', 'b\n');

  await killMidRebase(d1, repo, s.bottom, s.stacked, g);
  assert.equal(git(s.stacked.wt, 'rev-parse', `refs/heads/${s.stacked.branch}`), s.own, 'the branch has not moved yet');

  const d2 = await startDaemon(t, { home: d1.home });
  await restackedCleanly(d2, repo, s, 'undone');
  assert.equal(readFileSync(path.join(s.stacked.wt, 'slow.txt'), 'utf8'), 'b\n');
});

test('daemon and git killed with SIGKILL after the restack rebase moved the branch, before it ended: the next start undoes it and restacks the task', async (t) => {
  const s = await stackedPair(t);
  const { d1, repo } = s;
  // git runs this hook once the branch's new tip is written, its rebase state still there.
  const g = gate(t, `[ "$1" = committed ] && grep -q ' refs/heads/${s.stacked.branch}$'`, 'exit 0');
  const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
  writeFileSync(hook, `#!/bin/sh\nexec '${g.script}' "$@"\n`);
  chmodSync(hook, 0o755);

  await killMidRebase(d1, repo, s.bottom, s.stacked, g);
  assert.notEqual(git(s.stacked.wt, 'rev-parse', `refs/heads/${s.stacked.branch}`), s.own, 'with the branch moved');

  const d2 = await startDaemon(t, { home: d1.home });
  await restackedCleanly(d2, repo, s, 'undone');
});

test('daemon killed with SIGKILL after the restack rebase ended, before its row was written: the next start records the restack, not replaying it', async (t) => {
  const s = await stackedPair(t);
  const { d1, repo } = s;
  // git runs post-rewrite at the end of the rebase: the test holds it there, stops the daemon,
  // then lets git end, so that the daemon is killed before it can act on git's answer.
  const dir = makeTempDir(t);
  const [armed, started, release, gitPid] = ['armed', 'started', 'release', 'git-pid'].map((f) => path.join(dir, f)) as [string, string, string, string];
  execFileSync('mkfifo', [started, release]);
  const hook = path.join(repo, '.git', 'hooks', 'post-rewrite');
  writeFileSync(hook, `#!/bin/sh\n[ -e '${armed}' ] || exit 0\necho $PPID > '${gitPid}'\necho in > '${started}'\nread x < '${release}'\n`);
  chmodSync(hook, 0o755);

  writeFileSync(armed, '');
  await mergeBottom(d1, s.bottom);
  await readFile(started, 'utf8');
  rmSync(armed);
  d1.proc.kill('SIGSTOP');
  writeFileSync(release, 'go\n');
  await waitPidGone(Number(readFileSync(gitPid, 'utf8')), 60_000);
  assert.equal(await d1.stop('SIGKILL'), 'SIGKILL');
  // What the kill left: the rebase done in git, its intent still there, the row not written.
  assert.ok(!existsSync(gitPath(s.stacked.wt, 'rebase-merge')), 'the rebase had ended');
  assert.deepEqual(git(s.stacked.wt, 'log', '--format=%s', 'main..HEAD').split('\n'), ['edit stacked.txt']);
  assert.ok(existsSync(path.join(d1.home, 'data', 'journal', `${s.stacked.id}.rebase.json`)), 'its intent is left');

  const d2 = await startDaemon(t, { home: d1.home });
  await restackedCleanly(d2, repo, s, 'finished');
});

test('the intent of a restack whose row was written, left by a stop before it was void: the start voids it, the restack recorded once', async (t) => {
  const s = await stackedPair(t);
  const { d1, repo } = s;
  await mergeBottom(d1, s.bottom);
  await until(async () => (await restackEvents(d1, s.stacked.id)).length > 0, 'the restack event', 60_000);
  const head = git(s.stacked.wt, 'rev-parse', 'HEAD');
  await d1.stop();
  // The intent as the restack wrote it before its git ran.
  const restack = { task_id: s.bottom.id, branch: s.bottom.branch, onto: 'main' };
  const intent = { kind: 'rebase', task: s.stacked.id, repo, worktree: s.stacked.wt, branch: `refs/heads/${s.stacked.branch}`, head: s.own, onto: git(repo, 'rev-parse', 'main'), restack };
  writeFileSync(path.join(d1.home, 'data', 'journal', `${s.stacked.id}.rebase.json`), JSON.stringify(intent));

  const d2 = await startDaemon(t, { home: d1.home });
  await restackedCleanly(d2, repo, s, 'finished');
  assert.equal(git(s.stacked.wt, 'rev-parse', 'HEAD'), head, 'the branch as the restack left it');
});
