// Review and landing of a task's work (daemon/landing/review.ts) alone, in this process: real
// tasks (git worktrees) from the task service, the worker pool on the built workers, a test
// store. What the routes answer is test/api's; here, what the module itself decides: its
// refusals as problems with their codes, a request's bound as GIT_TIMEOUT, and the turns it
// takes (the task's, for writes; the turns' own, for recording turns).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { after } from 'node:test';
import { git, makeTempDir } from '../helpers/git.ts';
import { TURNS_AT_ONCE } from '../../daemon/landing/review.ts';
import { landingParts } from '../helpers/review.ts';

// One set for the file: each test makes tasks of its own, in projects of their own.
const { review, task, taskService } = await landingParts({ after });

const code = (c: string, also?: (err: any) => void) => (err: any) => {
  assert.equal(err.code, c, err.message);
  also?.(err);
  return true;
};

test('commit, rebase and merge refuse as problems with their codes, and leave the branch as it was', async () => {
  const a = await task('a');
  await assert.rejects(review.commit(a.id, 'nothing'), code('NOTHING_TO_COMMIT'));

  // The task and its base change the same line: the rebase conflicts, naming the file, aborted.
  writeFileSync(path.join(a.wt, 'README.md'), 'from the task\n');
  assert.deepEqual(await review.commit(a.id, 'task edit').then((c) => c.files), ['README.md']);
  const head = git(a.wt, 'rev-parse', 'HEAD');
  writeFileSync(path.join(a.repo, 'README.md'), 'from main\n');
  git(a.repo, 'commit', '-qam', 'main edit');
  await assert.rejects(review.rebase(a.id), code('CONFLICT', (e) => assert.deepEqual(e.files, ['README.md'])));
  assert.equal(git(a.wt, 'rev-parse', 'HEAD'), head, 'the branch is as it was');
  assert.equal(git(a.wt, 'status', '--porcelain'), '', 'no rebase left half done');

  // Uncommitted work is refused before anything moves.
  writeFileSync(path.join(a.wt, 'new.txt'), 'x\n');
  await assert.rejects(review.merge(a.id, {}), code('WORKTREE_DIRTY'));
  await assert.rejects(review.rebase(a.id), code('WORKTREE_DIRTY'));

  // An archived task has no worktree to review.
  const b = await task('b');
  await taskService.archive(b.id, true);
  await assert.rejects(review.commit(b.id, 'x'), code('TASK_NOT_READY'));
  await assert.rejects(review.changes(b.id), code('TASK_NOT_READY'));
});

test('a request whose git_timeout_s ran out while it waited answers GIT_TIMEOUT naming what and the bound; nothing runs', async () => {
  const a = await task('a');
  writeFileSync(path.join(a.wt, 'README.md'), 'changed\n');
  const late = { arrived: Date.now() - 61_000 };
  await assert.rejects(review.changes(a.id, {}, late), code('GIT_TIMEOUT', (e) => assert.match(e.detail, /^reading the changes took longer than git_timeout_s \(60 s\)/)));
  await assert.rejects(review.diff(a.id, undefined, {}, late), code('GIT_TIMEOUT', (e) => assert.match(e.detail, /^the diff took longer than git_timeout_s/)));
  await assert.rejects(review.commit(a.id, 'late', late), code('GIT_TIMEOUT', (e) => assert.match(e.detail, /setup_timeout_s \(60 s\).*the index is as it was/)));
  assert.equal(git(a.wt, 'status', '--porcelain'), 'M README.md', 'the late commit did not run');
  // A client that has gone is UNAVAILABLE, not a timeout.
  const gone = new AbortController();
  gone.abort();
  await assert.rejects(review.changes(a.id, {}, { signal: gone.signal }), code('UNAVAILABLE'));
  // In time, the same read answers.
  assert.deepEqual((await review.changes(a.id)).files.map((f: any) => f.path), ['README.md']);
});

test("a write waits for its task's turn: a commit asked while the turn is held runs once it is given back", async () => {
  const a = await task('a');
  writeFileSync(path.join(a.wt, 'one.txt'), '1\n');
  let committing!: Promise<unknown>;
  await taskService.perTask.run(a.id, async () => {
    committing = review.commit(a.id, 'both');
    // Written while the turn is held: a commit that waited for it takes this file too.
    await review.changes(a.id);
    writeFileSync(path.join(a.wt, 'two.txt'), '2\n');
  });
  const done: any = await committing;
  assert.deepEqual(done.files.sort(), ['one.txt', 'two.txt']);
});

test("turns recorded at once for one task take turns: each gets its own number, none is lost", async () => {
  const a = await task('a');
  // More than a worker tries a taken number: without the turns, some would give up.
  const numbers = Array.from({ length: 12 }, (_, i) => i + 1);
  writeFileSync(path.join(a.wt, 'f.txt'), 'f\n');
  const refs = await Promise.all(numbers.map((i) => review.checkpoint(a.id, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)));
  assert.deepEqual(refs.map((r) => r?.n).sort((x, y) => x! - y!), numbers);
  assert.deepEqual((await review.turns(a.id)).map((x: any) => x.n), numbers);
});

test('turns of different tasks are recorded two at a time: sessions ending at once do not run all their gits at once', async (t) => {
  // A clean filter that notes how many of its runs are under way, in every task's repository.
  const dir = makeTempDir(t);
  const counts = path.join(dir, 'counts');
  const filter = `f=$(mktemp -p '${dir}' run.XXXXXX); ls '${dir}' | grep -c '^run\\.' >> '${counts}'; sleep 0.4; rm -f "$f"; cat`;
  const tasks = await Promise.all(['p', 'q', 'r', 's', 'u'].map((n) => task(n)));
  for (const x of tasks) {
    git(x.repo, 'config', 'filter.slow.clean', filter);
    writeFileSync(path.join(x.wt, '.gitattributes'), '*.slow filter=slow\n');
    writeFileSync(path.join(x.wt, 'a.slow'), 'a\n');
  }
  const refs = await Promise.all(tasks.map((x, i) => review.checkpoint(x.id, `00000000-0000-4000-8000-${String(100 + i).padStart(12, '0')}`)));
  assert.deepEqual(refs.map((r) => r?.n), [1, 1, 1, 1, 1], 'each task its turn');
  const seen = readFileSync(counts, 'utf8').trim().split('\n').map(Number);
  assert.ok(seen.length >= tasks.length, `the filter ran for every task (${seen})`);
  assert.equal(Math.max(...seen), TURNS_AT_ONCE, `at most ${TURNS_AT_ONCE} at once, and that many (${seen})`);
});
