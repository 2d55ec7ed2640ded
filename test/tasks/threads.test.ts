import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createPool, runBound, type Pool, type TaskResult } from '../../daemon/tasks/threads.ts';
import type { MergeStrategy } from '../../schemas/review.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { gone, marker } from '../helpers/state.ts';

// A review task's bound, its clock started now.
const bound = (ms = 60_000, client?: AbortSignal, arrived?: number) => runBound({ ms, detail: 'took too long' }, 'GIT_TIMEOUT', { signal: client, arrived });

// One generic call for every worker task, its input and result typed from workers/index.ts: a
// plain task in the first pool, a review task with its bound (and its client's cancel) in the
// second. Run against the built workers; no daemon.
test('pool.run: a plain task and a review task through one call, the cancel crossing as a port', async (t) => {
  const pool = createPool({ maxThreads: 2 });
  t.after(() => pool.close());
  const repo = makeRepo(t);
  writeFileSync(path.join(repo, 'new.txt'), 'new\n');

  const dirty = await pool.run('worktreeDirty', { worktree: repo, timeout: { ms: 60_000, detail: 'took too long' } });
  assert.deepEqual(dirty, { ok: true, files: ['new.txt'] });

  const scratch = makeTempDir(t);
  const changes = await pool.run('taskChanges', { worktree: repo, base: 'main', scratch }, bound());
  assert.ok(changes.ok, JSON.stringify(changes));
  assert.deepEqual(
    changes.files.map((f) => [f.path, f.status]),
    [['new.txt', 'untracked']],
  );

  // A client gone before the task runs: the worker is told through its port and answers so.
  const gone = new AbortController();
  gone.abort();
  const cancelled = await pool.run('taskChanges', { worktree: repo, base: 'main', scratch }, bound(60_000, gone.signal));
  assert.deepEqual(cancelled, { ok: false, code: 'UNAVAILABLE', message: 'stopped: the client has gone' });
});

// What the compiler holds the call to (npm run typecheck): never run, each line must fail to compile.
function typedCalls(pool: Pool): void {
  // @ts-expect-error a review task takes its bound
  void pool.run('taskChanges', { worktree: '', base: '', scratch: '' });
  // @ts-expect-error a plain task takes none
  void pool.run('worktreeDirty', { worktree: '', timeout: { ms: 1, detail: '' } }, bound());
  // @ts-expect-error the input is the worker's own
  void pool.run('pushTask', { repo: '', branch: 1 }, bound());
  // @ts-expect-error no such task
  void pool.run('rebase', { worktree: '', base: '' }, bound());
  const merged = null as unknown as TaskResult<'mergeTask'>;
  // @ts-expect-error a result is checked for ok before its fields are read
  void merged.strategy;
  if (merged.ok) {
    const strategy: MergeStrategy = merged.strategy;
    // @ts-expect-error the strategy is the schema's, not any string
    const other: 'rebase' = merged.strategy;
    void strategy, other;
  }
}
void typedCalls;

// A repository whose clean filter sleeps (its marker in the process table) and an untracked file
// it runs on: a changes read of it hangs until stopped.
function hung(t: test.TestContext, m: string): string {
  const repo = makeRepo(t, { files: { '.gitattributes': '*.txt filter=hang\n' } });
  execFileSync('git', ['-C', repo, 'config', 'filter.hang.clean', `sleep ${m}`]);
  writeFileSync(path.join(repo, 'x.txt'), 'x\n');
  return repo;
}

test("a review task's bound counts from its request, the time it waited for a thread included", async (t) => {
  // One thread, which runs four tasks at once: four hung reads fill it.
  const pool = createPool({ maxThreads: 1 });
  t.after(() => pool.close());
  const m = marker(t);
  const repo = hung(t, m);
  const scratch = makeTempDir(t);
  const clients = Array.from({ length: 4 }, () => new AbortController());
  const holding = clients.map((c) => pool.run('taskChanges', { worktree: repo, base: 'main', scratch }, bound(60_000, c.signal)));
  const started = Date.now();
  const waiting = await pool.run('taskChanges', { worktree: repo, base: 'main', scratch }, bound(1_000));
  const took = Date.now() - started;
  assert.deepEqual(waiting, { ok: false, code: 'GIT_TIMEOUT', message: 'took too long' });
  assert.ok(took < 5_000, `the task waiting for a thread answered after ${took} ms`);

  // A request that arrived longer ago than its bound: the task does not run.
  const late = bound(1_000, undefined, Date.now() - 2_000);
  await new Promise((r) => late.signal.addEventListener('abort', r));
  assert.deepEqual(await pool.run('taskChanges', { worktree: repo, base: 'main', scratch }, late), { ok: false, code: 'GIT_TIMEOUT', message: 'took too long' });

  for (const c of clients) c.abort();
  for (const r of await Promise.all(holding)) assert.deepEqual(r, { ok: false, code: 'UNAVAILABLE', message: 'stopped: the client has gone' });
  await gone(m);
});
