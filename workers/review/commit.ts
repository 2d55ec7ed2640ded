import { chmodSync, copyFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { CommitResult } from '../../schemas/review.ts';
import { git } from '../../daemon/git/run.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';
import { copyIndex, privateDir } from './scratch.ts';
import { dirtyFiles, gitOut } from './snapshot.ts';

export interface CommitInput {
  worktree: string;
  message: string;
  /** the daemon's scratch folder: the index's backup is kept there */
  scratch: string;
}

// POST /api/tasks/:id/commit: everything uncommitted in the task's worktree, untracked files
// included and ignored ones not, as one commit on its branch. The repository's hooks run as for
// any commit; if git refuses, the worktree's index is put back as it was.
export async function commitTask(input: CommitInput, signal?: AbortSignal): Promise<Result<CommitResult>> {
  const { worktree } = input;
  const dirty = await dirtyFiles(worktree, { untracked: true, signal });
  if (!dirty.ok) return dirty;
  if (dirty.files.length === 0) return fail('NOTHING_TO_COMMIT', 'the worktree has no uncommitted changes');
  const index = await gitOut(worktree, ['rev-parse', '--path-format=absolute', '--git-path', 'index'], { signal });
  if (!index.ok) return index;
  const indexFile = index.out.trim();
  const saved = privateDir(input.scratch);
  const backup = copyIndex(indexFile, path.join(saved.dir, 'index'));
  try {
    const add = await git(worktree, ['add', '--all', '--', '.'], { signal });
    const commit = add.exitCode === 0 ? await git(worktree, ['commit', '--quiet', '--file=-', '--cleanup=verbatim'], { input: input.message, signal }) : add;
    if (commit.exitCode !== 0) {
      // The backup is private; the index gets its own mode back.
      const { mode } = statSync(indexFile);
      copyFileSync(backup, indexFile);
      chmodSync(indexFile, mode & 0o7777);
      return fail('COMMIT_FAILED', `git refused the commit: ${firstLine(commit.stderr || commit.stdout)}`);
    }
  } finally {
    saved.dispose();
  }
  const head = await gitOut(worktree, ['rev-parse', 'HEAD']);
  if (!head.ok) return head;
  const files = await gitOut(worktree, ['diff-tree', '--root', '--no-commit-id', '--name-only', '-r', '-z', 'HEAD']);
  if (!files.ok) return files;
  return { ok: true, commit: head.out.trim(), files: files.out.split('\0').filter(Boolean) };
}
