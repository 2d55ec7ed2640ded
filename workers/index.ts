// The worker pool's tasks, by name (Piscina's `name` option).
export { createWorktree } from './worktree/create.ts';
export { removeWorktree } from './worktree/remove.ts';
export { copyIncluded } from './worktree/copy.ts';
export { runSetup } from './setup.ts';
export { taskChanges } from './review/changes.ts';
export { taskDiff } from './review/diff.ts';
export { commitTask } from './review/commit.ts';
export { rebaseTask } from './review/rebase.ts';
export { mergeTask } from './review/merge.ts';
export { pushTask } from './review/push.ts';
export { recoverLanding } from './review/recover-landing.ts';
export { projectConflicts } from './review/conflicts.ts';
export { worktreeDirty } from './review/snapshot.ts';
