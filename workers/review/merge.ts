import type { MergeResult, MergeStrategy } from '../../schemas/review.ts';
import { git } from '../../daemon/git/run.ts';
import type { MergeIntent } from '../../schemas/journal.ts';
import { recordIntent } from '../intent.ts';
import { firstLine } from '../worktree/repo.ts';
import { conflict, fail, type Result } from '../result.ts';
import { dirtyFiles, gitOut, SHA } from './snapshot.ts';

export interface MergeInput {
  repo: string;
  worktree: string;
  /** the base branch (a branch name) and the task's */
  base: string;
  branch: string;
  strategy: MergeStrategy;
  message?: string | undefined;
  /** the task's name, for a squash commit's default message */
  title: string;
  /** where to record a landing in a checkout before git runs (daemon/journal/landing.ts); the daemon ends it */
  intent?: { file: string; task: string };
}

// Where a branch is checked out (the main checkout or a worktree), if anywhere.
async function checkoutOf(repo: string, ref: string, signal?: AbortSignal): Promise<Result<{ path: string | null }>> {
  const list = await gitOut(repo, ['worktree', 'list', '--porcelain', '-z'], { signal });
  if (!list.ok) return list;
  let current: string | null = null;
  for (const line of list.out.split('\0')) {
    if (line.startsWith('worktree ')) current = line.slice('worktree '.length);
    else if (line === `branch ${ref}`) return { ok: true, path: current };
  }
  return { ok: true, path: null };
}

// The commits of the base branch and the task's, in one git call when both are there.
async function tipsOf(repo: string, baseRef: string, branchRef: string, base: string, signal?: AbortSignal): Promise<Result<{ old: string; tip: string }>> {
  const both = await git(repo, ['rev-parse', `${baseRef}^{commit}`, `${branchRef}^{commit}`], { signal });
  const [old, tip, ...rest] = both.stdout.split('\n');
  if (both.exitCode === 0 && rest.length === 0 && SHA.test(old!) && SHA.test(tip!)) return { ok: true, old: old!, tip: tip! };
  // One is missing: each alone, for the answer it gives.
  const oldTip = await git(repo, ['rev-parse', '--verify', '--quiet', `${baseRef}^{commit}`], { signal });
  if (oldTip.exitCode !== 0) return fail('BASE_NOT_FOUND', `the task's base ${JSON.stringify(base)} is not a branch to merge into`);
  const head = await gitOut(repo, ['rev-parse', '--verify', `${branchRef}^{commit}`], { signal });
  if (!head.ok) return head;
  return { ok: true, old: oldTip.stdout.trim(), tip: head.out.trim() };
}

// The merged tree of two commits, computed without a checkout; the files when they conflict.
async function mergeTree(repo: string, ours: string, theirs: string, signal?: AbortSignal): Promise<Result<{ tree: string }>> {
  const r = await git(repo, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs], { signal });
  const [tree, ...files] = r.stdout.split('\0');
  if (r.exitCode === 0) return { ok: true, tree: tree! };
  if (r.exitCode === 1) {
    const names = [...new Set(files.filter(Boolean))];
    return conflict(`the task's branch conflicts with its base in ${names.join(', ')}; nothing was changed`, names);
  }
  return fail('INTERNAL', `git merge-tree failed: ${firstLine(r.stderr)}`);
}

// POST /api/tasks/:id/merge: the task's branch into its base branch, computed without a checkout
// (merge-tree, commit-tree) and landed with update-ref against the old value. Where the base is
// checked out, that checkout must be clean and moves with it; nothing is ever left half-merged.
export async function mergeTask(input: MergeInput, signal?: AbortSignal): Promise<Result<MergeResult>> {
  const { repo, strategy } = input;
  const baseRef = `refs/heads/${input.base}`;
  // Reads only, side by side (each costs a fork of the daemon's process); their answers are
  // taken in the order a landing refuses.
  const [dirty, tips, where] = await Promise.all([
    dirtyFiles(input.worktree, { untracked: true, signal }),
    tipsOf(repo, baseRef, `refs/heads/${input.branch}`, input.base, signal),
    checkoutOf(repo, baseRef, signal),
  ]);
  if (!dirty.ok) return dirty;
  if (dirty.files.length > 0) {
    return fail('WORKTREE_DIRTY', `the task's worktree has uncommitted or untracked changes (${dirty.files.slice(0, 10).join(', ')}); commit them first`);
  }
  if (!tips.ok) return tips;
  const { old, tip } = tips;
  const [mb, checkout] = await Promise.all([git(repo, ['merge-base', old, tip], { signal }), baseCheckout(where, signal)]);
  const mergeBase = mb.exitCode === 0 ? mb.stdout.trim() : null;
  if (mergeBase === tip) return { ok: true, base: input.base, commit: old, strategy }; // already in the base
  const fastForward = mergeBase === old;

  let next: string;
  if (strategy === 'ff' || (strategy === 'merge' && fastForward)) {
    if (!fastForward) return conflict(`${input.base} has moved on since the task's branch left it: it cannot be fast-forwarded; rebase the task first`, []);
    next = tip;
  } else {
    const merged = await mergeTree(repo, old, tip, signal);
    if (!merged.ok) return merged;
    const subjects = await gitOut(repo, ['log', '--reverse', '--format=* %s', `${old}..${tip}`], { signal });
    const message =
      input.message ??
      (strategy === 'squash' ? `${input.title}\n\nSquashed from ${input.branch}:\n${subjects.ok ? subjects.out : ''}` : `Merge branch '${input.branch}' into ${input.base}`);
    const parents = strategy === 'squash' ? ['-p', old] : ['-p', old, '-p', tip];
    const commit = await git(repo, ['commit-tree', merged.tree, ...parents, '-F', '-'], { input: message, signal });
    if (commit.exitCode !== 0) return fail('COMMIT_FAILED', `git refused the merge commit: ${firstLine(commit.stderr)}`);
    next = commit.stdout.trim();
  }
  return land(input, baseRef, old, next, checkout, signal);
}

// The base's checkout, if it has one, and whether it is clean (untracked files do not count).
type BaseCheckout = Result<{ path: null } | { path: string; dirty: string[] }>;
async function baseCheckout(where: Result<{ path: string | null }>, signal?: AbortSignal): Promise<BaseCheckout> {
  if (!where.ok) return where;
  if (where.path === null) return { ok: true, path: null };
  const dirty = await dirtyFiles(where.path, { untracked: false, signal });
  return dirty.ok ? { ok: true, path: where.path, dirty: dirty.files } : dirty;
}

// Moves the base branch from `old` to `next`, and its checkout's files with it where it has one.
// The signal stops every git here, the landing's too (a filter may hang in read-tree -u): what a
// stopped one leaves is finished or undone from the intent by the landing journal's recovery.
async function land(input: MergeInput, baseRef: string, old: string, next: string, where: BaseCheckout, signal?: AbortSignal): Promise<Result<MergeResult>> {
  const done: Result<MergeResult> = { ok: true, base: input.base, commit: next, strategy: input.strategy };
  const reason = `grove: merge ${input.branch} (${input.strategy})`;
  if (!where.ok) return where;
  if (where.path === null) {
    // No checkout to move: update-ref against the old value is atomic, so no intent is needed.
    const moved = await git(input.repo, ['update-ref', '-m', reason, baseRef, next, old], { signal });
    return moved.exitCode === 0 ? done : fail('CONFLICT', `${input.base} moved while merging: ${firstLine(moved.stderr)}; nothing was changed`);
  }
  const checkout = where.path;
  if (where.dirty.length > 0) {
    return fail('BASE_CHECKOUT_DIRTY', `${input.base} is checked out in ${checkout} with uncommitted changes (${where.dirty.slice(0, 10).join(', ')}); nothing was changed`);
  }
  if (input.intent) {
    const intent: MergeIntent = { kind: 'merge', task: input.intent.task, repo: input.repo, checkout, ref: baseRef, old, next };
    const unrecorded = recordIntent(input.intent.file, intent);
    if (unrecorded) return unrecorded;
  }
  // Index and files first (git checks every file before it writes one), then the branch.
  const files = await git(checkout, ['read-tree', '-m', '-u', old, next], { signal });
  if (files.exitCode !== 0) return fail('BASE_CHECKOUT_DIRTY', `the checkout of ${input.base} in ${checkout} cannot be updated: ${firstLine(files.stderr)}; nothing was changed`);
  const moved = await git(input.repo, ['update-ref', '-m', reason, baseRef, next, old], { signal });
  if (moved.exitCode === 0) return done;
  await git(checkout, ['read-tree', '-m', '-u', next, old], { signal });
  return fail('CONFLICT', `${input.base} moved while merging: ${firstLine(moved.stderr)}; nothing was changed`);
}
