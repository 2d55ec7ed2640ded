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

// The branch a warm slot would take for the task (DESIGN §16), checked but not taken: the daemon
// records it in the slot's row before renameBranch, so that a stop between the two is put right
// at the next start (claimLeft). The base is checked first, so that a slot made at an old tip is
// never handed out as a new task.
export async function planClaim(input: ClaimWorktreeInput): Promise<Result<{ branch: string }> | ClaimMiss> {
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
  return { ok: true, branch };
}

// The project's default base as it is now (its checkout's HEAD: its branch and commit, or null
// without a commit): a free slot made at another is replaced.
export async function defaultBase(input: { repo: string }): Promise<Result<{ head: { base: string; base_commit: string } | null }>> {
  const info = await repoInfo(input.repo);
  if (typeof info === 'string') return fail('INTERNAL', `git rev-parse failed in ${input.repo}: ${info}`);
  return { ok: true, head: info.head && { base: info.head.ref, base_commit: info.head.commit } };
}

// `git branch -m`, which also moves the HEAD of the worktree that has the branch; its folder stays.
export async function renameBranch(input: { repo: string; from: string; to: string }): Promise<Result<object>> {
  const moved = await withLockRetry(() => git(input.repo, ['branch', '-m', input.from, input.to]));
  if (moved.exitCode === 0) return { ok: true };
  const msg = firstLine(moved.stderr);
  return /already exists|cannot lock ref/.test(msg) ? fail('BRANCH_EXISTS', msg, '/branch') : fail('INTERNAL', `git branch -m failed: ${msg}`);
}

// Which of a claim's branches exist: after a stop mid-claim, the placeholder (`from`) still there
// means the rename did not happen; only the task's (`to`) means it did.
export async function claimLeft(input: { repo: string; from: string; to: string }): Promise<Result<{ from: boolean; to: boolean }>> {
  const out = await git(input.repo, ['for-each-ref', '--format=%(refname)', `refs/heads/${input.from}`, `refs/heads/${input.to}`]);
  if (out.exitCode !== 0) return fail('INTERNAL', `git for-each-ref failed in ${input.repo}: ${firstLine(out.stderr)}`);
  const refs = new Set(out.stdout.split('\n').filter(Boolean));
  return { ok: true, from: refs.has(`refs/heads/${input.from}`), to: refs.has(`refs/heads/${input.to}`) };
}
