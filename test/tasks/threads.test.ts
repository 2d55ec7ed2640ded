import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createPool, type Pool, type RunBound, type TaskResult } from '../../daemon/tasks/threads.ts';
import type { MergeStrategy } from '../../schemas/review.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';

const BOUND: RunBound = { ms: 60_000, detail: 'took too long', code: 'GIT_TIMEOUT' };

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
  const changes = await pool.run('taskChanges', { worktree: repo, base: 'main', scratch }, BOUND);
  assert.ok(changes.ok, JSON.stringify(changes));
  assert.deepEqual(
    changes.files.map((f) => [f.path, f.status]),
    [['new.txt', 'untracked']],
  );

  // A client gone before the task runs: the worker is told through its port and answers so.
  const gone = new AbortController();
  gone.abort();
  const cancelled = await pool.run('taskChanges', { worktree: repo, base: 'main', scratch }, { ...BOUND, signal: gone.signal });
  assert.deepEqual(cancelled, { ok: false, code: 'UNAVAILABLE', message: 'stopped: the client has gone' });
});

// What the compiler holds the call to (npm run typecheck): never run, each line must fail to compile.
function typedCalls(pool: Pool): void {
  // @ts-expect-error a review task takes its bound
  void pool.run('taskChanges', { worktree: '', base: '', scratch: '' });
  // @ts-expect-error a plain task takes none
  void pool.run('worktreeDirty', { worktree: '', timeout: { ms: 1, detail: '' } }, BOUND);
  // @ts-expect-error the input is the worker's own
  void pool.run('pushTask', { repo: '', branch: 1 }, BOUND);
  // @ts-expect-error no such task
  void pool.run('rebase', { worktree: '', base: '' }, BOUND);
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
