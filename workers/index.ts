// The worker pool's tasks, by name (Piscina's `name` option).
import { bounded } from './review/bound.ts';
import { taskChanges as changes } from './review/changes.ts';
import { taskDiff as diff } from './review/diff.ts';
import { commitTask as commit } from './review/commit.ts';
import { rebaseTask as rebase } from './review/rebase.ts';
import { mergeTask as merge } from './review/merge.ts';
import { pushTask as push } from './review/push.ts';
import { projectConflicts as conflicts } from './review/conflicts.ts';
import { recoverLanding as recover } from './review/recover-landing.ts';
import { dirtyFiles } from './review/snapshot.ts';
import { dropTurns as drop, listTurns as turns, recordTurn as turn, restoreTurn as restore } from './review/turn.ts';
import { timed, type TimeBound } from './timeout.ts';

export { createWorktree } from './worktree/create.ts';
export { claimLeft, defaultBase, planClaim, renameBranch } from './worktree/claim.ts';
export { removeWorktree } from './worktree/remove.ts';
export { copyIncluded } from './worktree/copy.ts';
export { runSetup } from './setup.ts';
// Review and landing run bounded and cancellable (workers/review/bound.ts).
export const taskChanges = bounded(changes);
export const taskDiff = bounded(diff);
export const commitTask = bounded(commit);
export const rebaseTask = bounded(rebase);
export const mergeTask = bounded(merge);
export const pushTask = bounded(push);
export const projectConflicts = bounded(conflicts);
export const recoverLanding = bounded(recover);
export const recordTurn = bounded(turn);
export const listTurns = bounded(turns);
export const restoreTurn = bounded(restore);
export const dropTurns = bounded(drop);

// A worktree's uncommitted and untracked files, bounded (a status runs the clean filters): an
// archive asks before its teardown.
export function worktreeDirty(input: { worktree: string; timeout: TimeBound }) {
  return timed(input.timeout, (signal) => dirtyFiles(input.worktree, { untracked: true, signal }));
}
