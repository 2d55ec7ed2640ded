import { git } from '../../daemon/git/run.ts';
import { fail, type Result } from '../result.ts';
import { withLockRetry } from './locks.ts';
import { branchFree, checkBranchName, suffixed } from './names.ts';
import { firstLine, repoInfo, resolveBase } from './repo.ts';

export interface ClaimWorktreeInput {
  /** the project's canonical root */
  repo: string;
  /** the slot's placeholder branch, checked out in its worktree */
  from: string;
  /** the slot's base and the commit its worktree was made at */
  base: string;
  base_commit: string;
  /** the task's: as for createWorktree */
  slug: string;
  branch?: string;
  wantBase?: string;
}

// Why a slot cannot be the task: another base was asked for (the slot stays), or the base has
// moved since the slot was made (the slot is stale and is replaced).
export type ClaimMiss = { ok: false; miss: 'other_base' | 'moved' };

// Gives a warm slot the task's branch (DESIGN §16): `git branch -m`, which also moves the
// worktree's HEAD; its folder stays. The base is checked first, so that a slot made at an old
// tip is never handed out as a new task.
export async function claimWorktree(input: ClaimWorktreeInput): Promise<Result<{ branch: string }> | ClaimMiss> {
  const { repo } = input;
  const [branchCheck, given, info, refsOut] = await Promise.all([
    input.branch === undefined ? null : checkBranchName(repo, input.branch),
    input.wantBase === undefined ? null : resolveBase(repo, input.wantBase),
    repoInfo(repo),
    git(repo, ['for-each-ref', '--format=%(refname)', 'refs/heads/']),
  ]);
  if (branchCheck) return branchCheck;
  if (typeof info === 'string') return fail('INTERNAL', `git rev-parse failed in ${repo}: ${info}`);
  const now = given ?? (info.head ? { ok: true as const, base: info.head.ref, base_commit: info.head.commit } : null);
  if (!now || !now.ok || now.base !== input.base) return { ok: false, miss: 'other_base' };
  if (now.base_commit !== input.base_commit) return { ok: false, miss: 'moved' };

  const refs = new Set(refsOut.stdout.split('\n').filter(Boolean));
  let branch = input.branch;
  if (branch !== undefined) {
    if (!branchFree(branch, refs)) return fail('BRANCH_EXISTS', `branch ${branch} exists already, or clashes with an existing branch's path`, '/branch');
  } else {
    for (let n = 1; branch === undefined; n++) {
      const b = `grove/${suffixed(input.slug, n)}`;
      if (branchFree(b, refs)) branch = b;
    }
  }
  const moved = await withLockRetry(() => git(repo, ['branch', '-m', input.from, branch]));
  if (moved.exitCode !== 0) {
    const msg = firstLine(moved.stderr);
    return /already exists|cannot lock ref/.test(msg) ? fail('BRANCH_EXISTS', msg, '/branch') : fail('INTERNAL', `git branch -m failed: ${msg}`);
  }
  return { ok: true, branch };
}
