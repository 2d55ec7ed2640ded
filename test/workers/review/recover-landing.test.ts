import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import test from 'node:test';
import type { MergeIntent, RebaseIntent } from '../../../schemas/journal.ts';
import { recoverLanding } from '../../../workers/review/recover-landing.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';
import { gone, marker } from '../../helpers/state.ts';

const porcelain = (dir: string) => execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' });
const gitPath = (dir: string, what: string) => git(dir, 'rev-parse', '--path-format=absolute', '--git-path', what);
const lock = (dir: string, what: string) => writeFileSync(`${gitPath(dir, what)}.lock`, '');

function commitFile(dir: string, file: string, text: string): string {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
  git(dir, 'add', file);
  git(dir, 'commit', '-qm', `edit ${file}`);
  return git(dir, 'rev-parse', 'HEAD');
}

// A repository with `main` checked out and a worktree on branch `task`, which has a commit of its own.
function repoWithTask(t: test.TestContext) {
  const repo = makeRepo(t, { files: { 'f.txt': 'one\n', 'g.txt': 'g\n' } });
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'task', wt);
  const head = commitFile(wt, 'f.txt', 'mine\n');
  return { repo, wt, head };
}

function rebaseIntent(repo: string, wt: string, head: string, onto: string): RebaseIntent {
  return { kind: 'rebase', task: randomUUID(), repo, worktree: wt, branch: 'refs/heads/task', head, onto };
}

test('a rebase stopped on a conflict and left so, with the locks of a killed git: aborted, the branch and files at the recorded head', async (t) => {
  const { repo, wt, head } = repoWithTask(t);
  const onto = commitFile(repo, 'f.txt', 'theirs\n');
  assert.notEqual(spawnSync('git', ['-C', wt, 'rebase', 'main'], { encoding: 'utf8' }).status, 0, 'the rebase stops on its conflict');
  for (const what of ['ORIG_HEAD', 'index', 'HEAD', 'refs/heads/task']) lock(wt, what);
  const res = await recoverLanding(rebaseIntent(repo, wt, head, onto));
  assert.deepEqual(res, { ok: true, outcome: 'undone', kept: [] });
  assert.ok(!existsSync(gitPath(wt, 'rebase-merge')));
  for (const what of ['ORIG_HEAD', 'index', 'HEAD', 'refs/heads/task']) assert.ok(!existsSync(`${gitPath(wt, what)}.lock`), `${what}.lock`);
  assert.equal(git(wt, 'symbolic-ref', 'HEAD'), 'refs/heads/task');
  assert.equal(git(wt, 'rev-parse', 'task'), head);
  assert.equal(porcelain(wt), '');
  assert.equal(readFileSync(path.join(wt, 'f.txt'), 'utf8'), 'mine\n');
});

test('a rebase cut short before its state folder (a fast-forward checkout): the files it wrote go back, files of others stay', async (t) => {
  const { repo, wt, head } = repoWithTask(t);
  const onto = commitFile(repo, 'g.txt', 'base\n');
  writeFileSync(path.join(wt, 'g.txt'), 'base\n'); // written by the rebase's checkout
  writeFileSync(path.join(wt, 'notes.txt'), 'an agent wrote this\n');
  lock(wt, 'index');
  const res = await recoverLanding(rebaseIntent(repo, wt, head, onto));
  assert.deepEqual(res, { ok: true, outcome: 'undone', kept: ['notes.txt'] });
  assert.equal(readFileSync(path.join(wt, 'g.txt'), 'utf8'), 'g\n');
  assert.equal(porcelain(wt), '?? notes.txt\n');
  assert.ok(!existsSync(gitPath(wt, 'index.lock')));
});

test('a rebase that had ended (the branch moved, no state left): kept as it is', async (t) => {
  const { repo, wt, head } = repoWithTask(t);
  const onto = commitFile(repo, 'g.txt', 'base\n');
  git(wt, 'rebase', '-q', 'main');
  const rebased = git(wt, 'rev-parse', 'HEAD');
  assert.deepEqual(await recoverLanding(rebaseIntent(repo, wt, head, onto)), { ok: true, outcome: 'finished', kept: [], head: rebased });
  assert.equal(git(wt, 'rev-parse', 'task'), rebased);
});

test('a rebase whose branch moved elsewhere since (not onto its base): moved, nothing touched, not taken for a rebase that ended', async (t) => {
  const { repo, wt, head } = repoWithTask(t);
  const onto = commitFile(repo, 'g.txt', 'base\n');
  const mine = commitFile(wt, 'h.txt', 'a commit of the user on the old base\n');
  assert.deepEqual(await recoverLanding(rebaseIntent(repo, wt, head, onto)), { ok: true, outcome: 'moved', kept: [] });
  assert.equal(git(wt, 'rev-parse', 'task'), mine);
  assert.equal(porcelain(wt), '');
});

// The main checkout mid-merge of `task` into `main`: the intent, and the two tips.
function mergeState(t: test.TestContext) {
  const { repo, wt } = repoWithTask(t);
  commitFile(wt, 'new/deep.txt', 'new\n');
  const next = commitFile(wt, 'g.txt', 'g from the task\n');
  const old = git(repo, 'rev-parse', 'main');
  const intent: MergeIntent = { kind: 'merge', task: randomUUID(), repo, checkout: repo, ref: 'refs/heads/main', old, next };
  return { repo, old, next, intent };
}

test('a merge staged on the old tip with HEAD and the branch locked: finished, the checkout matches its branch', async (t) => {
  const { repo, next, intent } = mergeState(t);
  git(repo, 'read-tree', '-m', '-u', intent.old, next);
  lock(repo, 'HEAD');
  lock(repo, 'refs/heads/main');
  assert.deepEqual(await recoverLanding(intent), { ok: true, outcome: 'finished', kept: [] });
  assert.equal(git(repo, 'rev-parse', 'main'), next);
  assert.equal(porcelain(repo), '');
  assert.ok(!existsSync(`${gitPath(repo, 'HEAD')}.lock`) && !existsSync(`${gitPath(repo, 'refs/heads/main')}.lock`));
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'the user commits');
});

test('a merge cut short while writing files: those it wrote go back; the user edits stay, named as kept', async (t) => {
  const { repo, old, intent } = mergeState(t);
  // What read-tree had done: f.txt written, g.txt unlinked, a new file made; the index not yet.
  writeFileSync(path.join(repo, 'f.txt'), 'mine\n');
  rmSync(path.join(repo, 'g.txt'));
  mkdirSync(path.join(repo, 'new'));
  writeFileSync(path.join(repo, 'new', 'deep.txt'), 'new\n');
  lock(repo, 'index');
  // And what the user did since: a file of their own.
  writeFileSync(path.join(repo, 'README.extra'), 'untracked by the user\n');
  const res = await recoverLanding(intent);
  assert.ok(res.ok, JSON.stringify(res));
  assert.equal(res.outcome, 'undone');
  assert.deepEqual(res.kept, ['README.extra']);
  assert.equal(git(repo, 'rev-parse', 'main'), old);
  assert.equal(readFileSync(path.join(repo, 'f.txt'), 'utf8'), 'one\n');
  assert.equal(readFileSync(path.join(repo, 'g.txt'), 'utf8'), 'g\n');
  assert.ok(!existsSync(path.join(repo, 'new')), 'the new file and its folder are gone');
  assert.equal(readFileSync(path.join(repo, 'README.extra'), 'utf8'), 'untracked by the user\n');
  assert.ok(!existsSync(gitPath(repo, 'index.lock')));
});

test("a merge cut short where the user changed one of its files: that file is kept, the merge's others go back", async (t) => {
  const { repo, intent } = mergeState(t);
  writeFileSync(path.join(repo, 'g.txt'), 'g from the task\n');
  writeFileSync(path.join(repo, 'f.txt'), 'the user typed here\n');
  const res = await recoverLanding(intent);
  assert.deepEqual(res, { ok: true, outcome: 'undone', kept: ['f.txt'] });
  assert.equal(readFileSync(path.join(repo, 'f.txt'), 'utf8'), 'the user typed here\n');
  assert.equal(porcelain(repo), ' M f.txt\n');
});

test('a merge whose checkout index was changed since: LANDING_INTERRUPTED, nothing moved', async (t) => {
  const { repo, old, intent } = mergeState(t);
  writeFileSync(path.join(repo, 'other.txt'), 'staged by the user\n');
  git(repo, 'add', 'other.txt');
  const res = await recoverLanding(intent);
  assert.equal(res.ok, false);
  assert.equal(!res.ok && res.code, 'LANDING_INTERRUPTED');
  assert.equal(git(repo, 'rev-parse', 'main'), old);
  assert.equal(porcelain(repo), 'A  other.txt\n');
});

test('a merge whose base moved on since, or whose checkout is gone: nothing is touched', async (t) => {
  const { repo, intent } = mergeState(t);
  const moved = commitFile(repo, 'f.txt', 'the user moved on\n');
  lock(repo, 'HEAD');
  assert.deepEqual(await recoverLanding(intent), { ok: true, outcome: 'moved', kept: [] });
  assert.equal(git(repo, 'rev-parse', 'main'), moved);
  assert.ok(existsSync(`${gitPath(repo, 'HEAD')}.lock`), 'a lock grove cannot know as its own stays');
  assert.deepEqual(await recoverLanding({ ...intent, checkout: path.join(repo, 'gone') }), { ok: true, outcome: 'gone', kept: [] });
});

test('a recovery whose rebase --abort hangs in a smudge filter is stopped by its signal: GIT_TIMEOUT, the rebase left for the next try, which undoes it', { timeout: 30_000 }, async (t) => {
  const m = marker(t);
  const repo = makeRepo(t, { files: { '.gitattributes': 'f.txt filter=slow\n', 'f.txt': 'one\n' } });
  const hang = path.join(makeTempDir(t), 'hang');
  const smudge = path.join(path.dirname(hang), 'smudge');
  writeFileSync(smudge, `#!/bin/sh\nif [ -e '${hang}' ]; then sleep ${m}; fi\nexec cat\n`, { mode: 0o755 });
  git(repo, 'config', 'filter.slow.smudge', smudge);
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'task', wt);
  const head = commitFile(wt, 'f.txt', 'mine\n');
  const onto = commitFile(repo, 'f.txt', 'theirs\n');
  assert.notEqual(spawnSync('git', ['-C', wt, 'rebase', 'main'], { encoding: 'utf8' }).status, 0, 'the rebase stops on its conflict');
  writeFileSync(hang, '');

  const stopped = await recoverLanding(rebaseIntent(repo, wt, head, onto), AbortSignal.timeout(500));
  assert.equal(stopped.ok, false);
  assert.equal(!stopped.ok && stopped.code, 'GIT_TIMEOUT');
  await gone(m);
  assert.ok(existsSync(gitPath(wt, 'rebase-merge')), "the rebase's state is kept: a stopped abort decides nothing");
  assert.equal(git(wt, 'rev-parse', 'task'), head);

  rmSync(hang);
  assert.deepEqual(await recoverLanding(rebaseIntent(repo, wt, head, onto), AbortSignal.timeout(20_000)), { ok: true, outcome: 'undone', kept: [] });
  assert.ok(!existsSync(gitPath(wt, 'rebase-merge')));
  assert.equal(git(wt, 'symbolic-ref', 'HEAD'), 'refs/heads/task');
  assert.equal(porcelain(wt), '');
  assert.equal(readFileSync(path.join(wt, 'f.txt'), 'utf8'), 'mine\n');
});
