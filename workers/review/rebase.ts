import { git } from '../../daemon/git/run.ts';
import type { RebaseIntent, RestackOf } from '../../schemas/journal.ts';
import { recordIntent } from '../intent.ts';
import { firstLine } from '../worktree/repo.ts';
import { conflict, fail, type Result } from '../result.ts';
import { dirtyFiles, gitOut, rebaseStart, resolveBase } from './snapshot.ts';

export interface RebaseInput {
  worktree: string;
  base: string;
  /** a restack (DESIGN §17): only the commits not on this ref (the merged task's branch the task
   * was stacked on) are replayed onto `base`, so a squashed or rebased landing of it is not replayed */
  upstream?: string;
  /** where to record the rebase before git runs (daemon/journal/landing.ts); the daemon ends it.
   * A restack's says so: a recovery that finds it ended records the restack the daemon could not */
  intent?: { file: string; task: string; repo: string; restack?: RestackOf };
}

// No editor ever opens: git would wait for one that nobody sees.
export const NO_EDITOR = { GIT_EDITOR: 'true', GIT_SEQUENCE_EDITOR: 'true' };

// POST /api/tasks/:id/rebase: the task's branch onto its base's tip, in its worktree. A conflict
// aborts the rebase: the branch, its worktree and index are as they were, and the files are named.
export async function rebaseTask(input: RebaseInput, signal?: AbortSignal): Promise<Result<{ head: string; onto: string }>> {
  const { worktree } = input;
  // Both only read: side by side, each costs a fork of the daemon's process.
  const [dirty, tip] = await Promise.all([dirtyFiles(worktree, { untracked: true, signal }), rebaseStart(worktree, input.base, signal)]);
  if (!dirty.ok) return dirty;
  if (dirty.files.length > 0) {
    return fail('WORKTREE_DIRTY', `the worktree has uncommitted or untracked changes (${dirty.files.slice(0, 10).join(', ')}); commit them first`);
  }
  if (!tip.ok) return tip;
  if (input.intent) {
    const { file, task, repo, restack } = input.intent;
    const intent: RebaseIntent = { kind: 'rebase', task, repo, worktree, branch: tip.branch, head: tip.head, onto: tip.tip, ...(restack ? { restack } : {}) };
    const unrecorded = recordIntent(file, intent);
    if (unrecorded) return unrecorded;
  }
  let onto = [tip.tip];
  if (input.upstream !== undefined) {
    const upstream = await resolveBase(worktree, input.upstream, signal);
    if (!upstream.ok) return upstream;
    onto = ['--onto', tip.tip, upstream.tip];
  }
  const r = await git(worktree, ['rebase', '--quiet', '--no-autostash', ...onto], { env: NO_EDITOR, signal });
  if (r.exitCode === 0) {
    const head = await gitOut(worktree, ['rev-parse', 'HEAD'], { signal });
    return head.ok ? { ok: true, head: head.out.trim(), onto: tip.tip } : head;
  }
  // The abort runs under the same bound: it writes the files back, and a filter may hang there
  // too. A rebase that was stopped (its bound, its client gone) is not aborted here: its intent
  // stays, and the landing journal's recovery aborts it under a bound of its own.
  const unmerged = await gitOut(worktree, ['diff', '--name-only', '--diff-filter=U', '-z'], { signal });
  const abort = await git(worktree, ['rebase', '--abort'], { env: NO_EDITOR, signal });
  if (abort.exitCode !== 0) return fail('INTERNAL', `git rebase failed and could not be aborted: ${firstLine(abort.stderr)}`);
  const files = unmerged.ok ? unmerged.out.split('\0').filter(Boolean) : [];
  if (files.length === 0) return fail('INTERNAL', `git rebase failed: ${firstLine(r.stderr || r.stdout)}`);
  return conflict(`rebasing onto ${input.base} conflicts in ${files.join(', ')}; the rebase was aborted and the branch is as it was`, files);
}
