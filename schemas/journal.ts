import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.ts';

// The intents grove writes to `<data>/journal/` right before the git they describe runs, so that a
// daemon or git killed half-way is undone or finished at the next start (daemon/journal/). They
// are files of grove's own, read back as written: these are their shapes, for the worker that
// writes one and the daemon that reads it.

/** A task creation: the branch and worktree `git worktree add` is about to make. */
export const CreationIntent = Type.Object({
  id: Id,
  repo: Type.String({ description: "the project's path" }),
  branch: Type.String(),
  worktree_path: Type.String({ description: 'relative to repo' }),
  base_commit: Type.String({ description: 'the commit the branch starts at: an undo deletes the branch only while it points there' }),
});
export type CreationIntent = Static<typeof CreationIntent>;

// What every landing intent names: its task and the project's repository.
const landing = { task: Id, repo: Type.String() };

/** What a restack (DESIGN §17) rebases the task off: the merged task it was stacked on, whose
 * branch was the task's base, and that task's base, the task's base once the rebase ends. */
export const RestackOf = Type.Object({
  task_id: Id,
  branch: Type.String(),
  onto: Type.String({ description: "the merged task's base (a branch name)" }),
});
export type RestackOf = Static<typeof RestackOf>;

/** A rebase of a task's branch in its worktree; the worktree was clean when it began. */
export const RebaseIntent = Type.Object({
  kind: Type.Literal('rebase'),
  ...landing,
  worktree: Type.String(),
  branch: Type.Union([Type.String(), Type.Null()], { description: 'the branch checked out in the worktree (refs/heads/…), null on a detached HEAD' }),
  head: Type.String({ description: 'the commit before the rebase' }),
  onto: Type.String({ description: 'the commit it rebases onto' }),
  restack: Type.Optional(RestackOf),
});
export type RebaseIntent = Static<typeof RebaseIntent>;

/** A merge landing in a checkout of its base branch: read-tree -m -u old next, then update-ref. */
export const MergeIntent = Type.Object({
  kind: Type.Literal('merge'),
  ...landing,
  checkout: Type.String(),
  ref: Type.String({ description: 'the base branch (refs/heads/…), moved from old to next' }),
  old: Type.String(),
  next: Type.String(),
});
export type MergeIntent = Static<typeof MergeIntent>;

export const LandingIntent = Type.Union([RebaseIntent, MergeIntent]);
export type LandingIntent = Static<typeof LandingIntent>;

export const Intent = Type.Union([CreationIntent, RebaseIntent, MergeIntent]);
export type Intent = Static<typeof Intent>;
