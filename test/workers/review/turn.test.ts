import '../../helpers/env.ts';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { taskChanges } from '../../../workers/review/changes.ts';
import { taskDiff } from '../../../workers/review/diff.ts';
import { dropTurns, listTurns, recordTurn, restoreTurn } from '../../../workers/review/turn.ts';
import { git, makeRepo, makeTempDir } from '../../helpers/git.ts';

// What a checkpoint must leave as it was: the branch, the index file's bytes, status, the files.
function state(wt: string) {
  const index = git(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index');
  return {
    head: git(wt, 'rev-parse', 'HEAD'),
    branch: git(wt, 'symbolic-ref', 'HEAD'),
    index: createHash('sha256').update(readFileSync(index)).digest('hex'),
    status: git(wt, 'status', '--porcelain=v2', '--untracked-files=all'),
  };
}

// The worktree's files (ignored ones included) and their bytes, .git aside.
function files(wt: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of git(wt, 'ls-files', '-z', '--cached', '--others').split('\0').filter(Boolean)) {
    const p = path.join(wt, f);
    if (existsSync(p)) out[f] = readFileSync(p, 'utf8');
  }
  return out;
}

function setup(t: test.TestContext) {
  const repo = makeRepo(t, { files: { 'README.md': '# fixture\n', 'a.txt': 'a\n', 'b.txt': 'b\n', '.gitignore': '*.log\n' } });
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/x', wt);
  return { repo, wt, task: randomUUID(), scratch: path.join(makeTempDir(t), 'scratch') };
}

test('a turn records committed, staged, unstaged and untracked work (ignored excluded) and leaves the branch, the index bytes, status and the files as they were', async (t) => {
  const { wt, task, scratch } = setup(t);
  writeFileSync(path.join(wt, 'a.txt'), 'committed\n');
  git(wt, 'commit', '-q', '-am', 'work');
  writeFileSync(path.join(wt, 'b.txt'), 'staged\n');
  git(wt, 'add', 'b.txt');
  writeFileSync(path.join(wt, 'b.txt'), 'staged then changed\n');
  writeFileSync(path.join(wt, 'new.txt'), 'untracked\n');
  rmSync(path.join(wt, 'README.md'));
  writeFileSync(path.join(wt, 'debug.log'), 'ignored\n');
  const before = state(wt);
  const bytes = files(wt);

  const res = await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() });
  assert.ok(res.ok, JSON.stringify(res));
  assert.deepEqual(state(wt), before);
  assert.deepEqual(files(wt), bytes);
  assert.equal(res.turn.n, 1);
  assert.equal(git(wt, 'rev-parse', `refs/grove/turns/${task}/1`), res.turn.commit);
  // The commit's tree is the working state; its second parent's the index (b.txt as staged).
  assert.deepEqual(git(wt, 'ls-tree', '-r', '--name-only', res.turn.commit).split('\n'), ['.gitignore', 'a.txt', 'b.txt', 'new.txt']);
  assert.equal(git(wt, 'show', `${res.turn.commit}:b.txt`), 'staged then changed');
  assert.equal(git(wt, 'show', `${res.turn.commit}^2:b.txt`), 'staged');
  assert.equal(git(wt, 'rev-parse', `${res.turn.commit}^1`), before.head);
  // Against HEAD then: b.txt, new.txt and README.md differ.
  assert.equal(res.turn.files, 3);

  // The next turn counts on, even with nothing changed (each session end has its turn).
  const again = await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() });
  assert.ok(again.ok, JSON.stringify(again));
  assert.equal(again.turn.n, 2);
  assert.equal(again.turn.files, 0);
  const listed = await listTurns({ worktree: wt, task });
  assert.ok(listed.ok);
  assert.deepEqual(listed.turns.map((x) => [x.n, x.commit, x.files]), [[1, res.turn.commit, 3], [2, again.turn.commit, 0]]);
  assert.deepEqual(state(wt), before);
});

test('changes and diff between turns, and from a turn to the work; an unknown turn is TURN_NOT_FOUND', async (t) => {
  const { wt, task, scratch } = setup(t);
  writeFileSync(path.join(wt, 'a.txt'), 'one\n');
  const one = await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() });
  assert.ok(one.ok);
  writeFileSync(path.join(wt, 'a.txt'), 'two\n');
  writeFileSync(path.join(wt, 'c.txt'), 'c\n');
  const two = await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() });
  assert.ok(two.ok);
  rmSync(path.join(wt, 'b.txt'));

  const between = await taskChanges({ worktree: wt, base: 'main', task, scratch, from: { turn: 1 }, to: { turn: 2 } });
  assert.ok(between.ok, JSON.stringify(between));
  assert.deepEqual(between.files.map((f) => [f.path, f.status]), [['a.txt', 'modified'], ['c.txt', 'added']]);
  const toWork = await taskChanges({ worktree: wt, base: 'main', task, scratch, from: { turn: 2 } });
  assert.ok(toWork.ok, JSON.stringify(toWork));
  assert.deepEqual(toWork.files.map((f) => [f.path, f.status]), [['b.txt', 'deleted']]);
  const fromWork = await taskChanges({ worktree: wt, base: 'main', task, scratch, from: 'work', to: { turn: 1 } });
  assert.ok(fromWork.ok, JSON.stringify(fromWork));
  assert.deepEqual(fromWork.files.map((f) => [f.path, f.status]), [['a.txt', 'modified'], ['b.txt', 'added'], ['c.txt', 'deleted']]);

  const diff = await taskDiff({ worktree: wt, base: 'main', task, scratch, from: { turn: 1 }, to: { turn: 2 } });
  assert.ok(diff.ok, JSON.stringify(diff));
  const text = Buffer.from(diff.diff).toString();
  assert.match(text, /^-one$/m);
  assert.match(text, /^\+two$/m);
  assert.match(text, /^\+\+\+ b\/c\.txt$/m);
  assert.doesNotMatch(text, /b\.txt/);

  const missing = await taskChanges({ worktree: wt, base: 'main', task, scratch, from: { turn: 3 } });
  assert.deepEqual(missing.ok ? null : missing.code, 'TURN_NOT_FOUND');
  const missingDiff = await taskDiff({ worktree: wt, base: 'main', task, scratch, to: { turn: 9 } });
  assert.deepEqual(missingDiff.ok ? null : missingDiff.code, 'TURN_NOT_FOUND');
});

test('a restore gives back staged, unstaged and untracked files as they were, removes what the turn lacks, leaves ignored files and the branch; restoring the saved turn undoes it byte for byte', async (t) => {
  const { wt, task, scratch } = setup(t);
  writeFileSync(path.join(wt, 'a.txt'), 'unstaged\n');
  writeFileSync(path.join(wt, 's.txt'), 'staged new\n');
  git(wt, 'add', 's.txt');
  writeFileSync(path.join(wt, 'u.txt'), 'untracked\n');
  rmSync(path.join(wt, 'b.txt'));
  const turnState = state(wt);
  const turnFiles = files(wt);
  const one = await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() });
  assert.ok(one.ok);

  // Later work: a commit, other changes, files the turn lacks, an ignored file.
  writeFileSync(path.join(wt, 'a.txt'), 'later\n');
  git(wt, 'commit', '-q', '-am', 'later');
  writeFileSync(path.join(wt, 'b.txt'), 'back again\n');
  rmSync(path.join(wt, 'u.txt'));
  rmSync(path.join(wt, 's.txt'));
  writeFileSync(path.join(wt, 'other.txt'), 'new later\n');
  writeFileSync(path.join(wt, 'debug.log'), 'ignored\n');
  const laterState = state(wt);
  const laterFiles = files(wt);

  const restored = await restoreTurn({ worktree: wt, task, scratch, turn: 1 });
  assert.ok(restored.ok, JSON.stringify(restored));
  assert.equal(restored.saved.n, 2);
  assert.equal(restored.saved.restored, 1);
  assert.equal(restored.saved.session_id, null);
  assert.equal(restored.restored.commit, one.turn.commit);
  // HEAD stays where the later commit put it: the files and index are the turn's.
  assert.equal(git(wt, 'rev-parse', 'HEAD'), laterState.head);
  assert.deepEqual(files(wt), { ...turnFiles, 'debug.log': 'ignored\n' });
  assert.deepEqual(git(wt, 'diff', '--cached', '--name-status', `${turnState.head}`), 'A\ts.txt');
  assert.match(git(wt, 'status', '--porcelain=v1'), /^\?\? u\.txt$/m);
  // The index is the turn's too: a.txt as it was staged then, against the later HEAD.
  assert.equal(git(wt, 'show', ':a.txt'), 'a');

  // Undo: the saved turn back, and status is what it was.
  const undo = await restoreTurn({ worktree: wt, task, scratch, turn: 2 });
  assert.ok(undo.ok, JSON.stringify(undo));
  assert.equal(undo.saved.n, 3);
  assert.deepEqual(files(wt), laterFiles);
  assert.equal(state(wt).status, laterState.status);
  assert.equal(state(wt).head, laterState.head);

  const missing = await restoreTurn({ worktree: wt, task, scratch, turn: 7 });
  assert.deepEqual(missing.ok ? null : missing.code, 'TURN_NOT_FOUND');
  assert.deepEqual(files(wt), laterFiles);
});

test("dropping a task's turns removes its refs only", async (t) => {
  const { repo, wt, task, scratch } = setup(t);
  const other = randomUUID();
  for (const id of [task, task, other]) assert.ok((await recordTurn({ worktree: wt, task: id, scratch, session_id: randomUUID() })).ok);
  const res = await dropTurns({ repo, task });
  assert.deepEqual(res, { ok: true, dropped: 2 });
  assert.equal(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/grove/turns/'), `refs/grove/turns/${other}/1`);
  assert.equal(git(repo, 'rev-parse', '--abbrev-ref', 'grove/x'), 'grove/x');
});

test('a turn is recorded in the middle of a merge (an index with conflicts) and while another git holds the index lock, touching neither', async (t) => {
  const { repo, wt, task, scratch } = setup(t);
  git(repo, 'checkout', '-q', '-b', 'other');
  writeFileSync(path.join(repo, 'a.txt'), 'theirs\n');
  git(repo, 'commit', '-q', '-am', 'theirs');
  git(repo, 'checkout', '-q', 'main');
  writeFileSync(path.join(wt, 'a.txt'), 'ours\n');
  git(wt, 'commit', '-q', '-am', 'ours');
  assert.throws(() => git(wt, 'merge', '-q', 'other'));
  const before = state(wt);
  assert.match(before.status, /^u UU /m);
  const lock = `${git(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index')}.lock`;
  writeFileSync(lock, '');
  const res = await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() });
  assert.ok(res.ok, JSON.stringify(res));
  rmSync(lock);
  assert.deepEqual(state(wt), before);
  // The working file with its conflict markers; in the index's commit, as it is in the worktree.
  assert.match(git(wt, 'show', `${res.turn.commit}:a.txt`), /^<<<<<<< /m);
  assert.equal(git(wt, 'show', `${res.turn.commit}^2:a.txt`), git(wt, 'show', `${res.turn.commit}:a.txt`));
});

test("a restore while another git holds the index lock is REPO_LOCKED, and says how to undo what it did", async (t) => {
  const { wt, task, scratch } = setup(t);
  writeFileSync(path.join(wt, 'a.txt'), 'one\n');
  assert.ok((await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() })).ok);
  writeFileSync(path.join(wt, 'a.txt'), 'two\n');
  const lock = `${git(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index')}.lock`;
  writeFileSync(lock, '');
  t.after(() => rmSync(lock, { force: true }));
  const res = await restoreTurn({ worktree: wt, task, scratch, turn: 1 });
  assert.equal(res.ok ? null : res.code, 'REPO_LOCKED');
  assert.match(res.ok ? '' : res.message, /restore turn 2 to undo/);
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'one\n');
  rmSync(lock);
  const undo = await restoreTurn({ worktree: wt, task, scratch, turn: 2 });
  assert.ok(undo.ok, JSON.stringify(undo));
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'two\n');
});
