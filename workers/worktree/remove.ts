import { lstatSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { git } from '../../daemon/git/run.ts';
import { fail, type Result } from '../result.ts';
import { timed, type TimeBound } from '../timeout.ts';
import { groveWorktreePath, worktreesDirLinked } from './folders.ts';
import { foreignLock, lockedFail, withLockRetry } from './locks.ts';
import { firstLine, isWorktreeRoot } from './repo.ts';

export interface RemoveWorktreeInput {
  repo: string;
  worktree_path: string;
  force: boolean;
  /** also delete the branch (only to undo a creation) */
  deleteBranch?: string;
  /** delete it only if it still points at this commit */
  deleteBranchAt?: string;
  /** the bound of its git (a status runs the repository's clean filters) */
  timeout?: TimeBound;
}

// What was found where the worktree should be: a live worktree (removed), a symlink (unlinked,
// its target left alone), nothing, or something grove did not make (left alone).
export type RemovedWorktree = { removed: 'worktree' | 'link' | 'missing' | 'foreign' };

// Removes a task's worktree, keeping its branch; refuses uncommitted work unless forced.
// It never follows a symlink: a linked folder is unlinked, its target left alone.
export function removeWorktree(input: RemoveWorktreeInput): Promise<Result<RemovedWorktree>> {
  return timed(input.timeout, (signal) => remove(input, signal));
}

async function remove(input: RemoveWorktreeInput, signal: AbortSignal | undefined): Promise<Result<RemovedWorktree>> {
  const { repo } = input;
  const rel = groveWorktreePath(input.worktree_path);
  if (rel === null) return fail('INTERNAL', `refusing to remove ${input.worktree_path}: not a grove worktree path`);
  const abs = path.join(repo, rel);
  let removed: RemovedWorktree['removed'];

  let st = null;
  try {
    st = lstatSync(abs);
  } catch {
    st = null;
  }
  // Any symlink on the way (.grove, .grove/worktrees, the folder itself) means: touch nothing behind it.
  if (worktreesDirLinked(repo)) {
    removed = 'foreign';
  } else if (st === null) {
    removed = 'missing';
  } else if (st.isSymbolicLink()) {
    unlinkSync(abs);
    removed = 'link';
  } else if (!st.isDirectory() || !(await isWorktreeRoot(abs, signal))) {
    // A stopped check said nothing: the folder is not taken for someone else's.
    if (signal?.aborted) return fail('INTERNAL', 'stopped while checking the worktree');
    removed = 'foreign';
  } else {
    if (!input.force) {
      const status = await git(abs, ['status', '--porcelain=v1', '--untracked-files=all'], { signal });
      if (status.exitCode !== 0) return fail('INTERNAL', `git status failed: ${firstLine(status.stderr)}`);
      if (status.stdout !== '') {
        const files = status.stdout.split('\n').slice(0, 10).map((l) => l.slice(3));
        return fail('WORKTREE_DIRTY', `the worktree has uncommitted or untracked changes (${files.join(', ')}); use force=true to discard them`);
      }
    }
    const rm = await withLockRetry(() => git(repo, ['worktree', 'remove', ...(input.force ? ['--force', '--force'] : []), '--', abs], { signal }));
    if (rm.exitCode !== 0) {
      const msg = firstLine(rm.stderr);
      const lock = foreignLock(rm.stderr);
      if (lock) return lockedFail(lock);
      if (/contains modified or untracked files/.test(msg)) return fail('WORKTREE_DIRTY', msg);
      if (/locked working tree/.test(msg)) {
        return fail('REPO_LOCKED', `${msg}: it was locked with \`git worktree lock\`; unlock it, or archive with force=true`);
      }
      return fail('INTERNAL', `git worktree remove failed: ${msg}`);
    }
    removed = 'worktree';
  }
  // What is left is safe to repeat: the worktree is gone, and a branch is deleted only as named.
  await git(repo, ['worktree', 'prune'], { signal });
  if (input.deleteBranch) {
    // Only while the branch is still where the creation put it: a commit on it is someone's work.
    if (input.deleteBranchAt) await git(repo, ['update-ref', '-d', `refs/heads/${input.deleteBranch}`, input.deleteBranchAt], { signal });
    else await git(repo, ['branch', '-D', '--', input.deleteBranch], { signal });
  }
  return { ok: true, removed };
}
