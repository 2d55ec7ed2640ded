import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Task } from '../../schemas/task.ts';
import { git } from '../../daemon/git/run.ts';
import { voidIntent } from '../../daemon/journal/intents.ts';
import { recordIntent } from '../intent.ts';
import { fail, type Result } from '../result.ts';
import { timed, type TimeBound } from '../timeout.ts';
import { ensureExcluded, ensureWorktreesDir, isLink, WORKTREES_DIR } from './folders.ts';
import { foreignLock, lockedFail, withLockRetry } from './locks.ts';
import { branchFree, checkBranchName, suffixed } from './names.ts';
import { firstLine, repoInfo, resolveBase } from './repo.ts';

export interface CreateWorktreeInput {
  /** the project's canonical root */
  repo: string;
  /** the slug made from the task name; suffixed -2, -3… on collision */
  slug: string;
  /** an explicit branch name; default grove/<slug> */
  branch?: string;
  /** a ref to start from; default the repository's current branch */
  base?: string;
  /** worktree paths (relative) that live tasks hold */
  taken: string[];
  /** where to record what is about to be made, before git makes it (see daemon/journal/creation.ts) */
  intent?: { id: string; file: string };
  /** the bound of its git (the checkout runs the repository's filters); the undo gets as long again */
  timeout?: TimeBound;
}

// What the task's row takes from the new worktree.
export type CreatedWorktree = Pick<Task, 'branch' | 'worktree_path' | 'base' | 'base_commit'>;

// Creates the task's branch and worktree; on any failure nothing is left behind.
export function createWorktree(input: CreateWorktreeInput): Promise<Result<CreatedWorktree>> {
  return timed(input.timeout, (signal) => create(input, signal));
}

async function create(input: CreateWorktreeInput, signal: AbortSignal | undefined): Promise<Result<CreatedWorktree>> {
  const { repo } = input;
  // Independent look-ups run side by side: each git call costs a process start.
  const [branchCheck, given, info, refsOut] = await Promise.all([
    input.branch === undefined ? null : checkBranchName(repo, input.branch, signal),
    input.base === undefined ? null : resolveBase(repo, input.base, signal),
    repoInfo(repo, signal),
    git(repo, ['for-each-ref', '--format=%(refname)', 'refs/heads/'], { signal }),
  ]);
  if (signal?.aborted) return fail('INTERNAL', 'stopped before the worktree was made');
  if (branchCheck) return branchCheck;
  if (typeof info === 'string') return fail('INTERNAL', `git rev-parse failed in ${repo}: ${info}`);
  let base: string;
  let baseCommit: string;
  if (given) {
    if (!given.ok) return given;
    ({ base, base_commit: baseCommit } = given);
  } else {
    if (!info.head) return fail('BASE_NOT_FOUND', 'the repository has no commit to start from');
    ({ ref: base, commit: baseCommit } = info.head);
  }
  ensureExcluded(info.commonDir);

  const unsafe = ensureWorktreesDir(repo);
  if (unsafe) return fail('CONFIG_INVALID', unsafe);

  const refs = new Set(refsOut.stdout.split('\n').filter(Boolean));
  if (input.branch !== undefined && !branchFree(input.branch, refs)) {
    return fail('BRANCH_EXISTS', `branch ${input.branch} exists already, or clashes with an existing branch's path`, '/branch');
  }
  const { branch, rel } = freeName(input, refs);
  const abs = path.join(repo, rel);

  if (input.intent) {
    const unrecorded = recordIntent(input.intent.file, { id: input.intent.id, repo, branch, worktree_path: rel, base_commit: baseCommit });
    if (unrecorded) return unrecorded;
  }
  const add = await withLockRetry(() => git(repo, ['worktree', 'add', '--quiet', '--no-track', '-b', branch, '--', abs, baseCommit], { signal }));
  if (add.exitCode !== 0) {
    // A stopped add is undone too, under a bound of its own: the creation's has run out.
    const undone = await undoCreate(repo, abs, branch, refs, input.timeout && AbortSignal.timeout(input.timeout.ms));
    // An undo stopped part-way keeps the intent: the next start takes back what is left.
    if (input.intent && undone) voidIntent(input.intent.file);
    const msg = firstLine(add.stderr);
    const lock = foreignLock(add.stderr);
    if (lock) return lockedFail(lock);
    if (/already exists/.test(msg) && /branch/i.test(msg)) return fail('BRANCH_EXISTS', msg, '/branch');
    if (/cannot lock ref/.test(msg)) return fail('BRANCH_EXISTS', msg, '/branch');
    return fail('INTERNAL', `git worktree add failed: ${msg}`);
  }
  return { ok: true, branch, worktree_path: rel, base, base_commit: baseCommit };
}

// The first slug (-2, -3… after it) whose folder is free and, unless a branch was given,
// whose grove/<slug> branch can be made.
function freeName(input: CreateWorktreeInput, refs: Set<string>): { branch: string; rel: string } {
  const taken = new Set(input.taken);
  for (let n = 1; ; n++) {
    const slug = suffixed(input.slug, n);
    const rel = `${WORKTREES_DIR}/${slug}/`;
    const branch = input.branch ?? `grove/${slug}`;
    if (taken.has(rel) || existsSync(path.join(input.repo, rel)) || isLink(path.join(input.repo, WORKTREES_DIR, slug))) continue;
    if (input.branch === undefined && !branchFree(branch, refs)) continue;
    return { branch, rel };
  }
}

// Removes what a failed `worktree add` may have left: its folder, its registration, its branch.
// False when its bound stopped it first.
async function undoCreate(repo: string, abs: string, branch: string, refsBefore: Set<string>, signal: AbortSignal | undefined): Promise<boolean> {
  if (existsSync(abs) && !isLink(abs)) rmSync(abs, { recursive: true, force: true });
  await git(repo, ['worktree', 'prune'], { signal });
  if (!refsBefore.has(`refs/heads/${branch}`)) {
    const now = await git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { signal });
    if (now.exitCode === 0) await git(repo, ['branch', '-D', '--', branch], { signal });
  }
  return !signal?.aborted;
}
