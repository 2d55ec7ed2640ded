import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.ts';

// A restack (DESIGN §17), as a stacked task's `task.status` event carries it next to the task
// (daemon/tasks/review.ts `restack`): rebased onto the base of the task it was stacked on once that
// task merged, or left as it was with what stopped it.
const About = {
  task_id: Id,
  branch: Type.String({ description: 'the merged task\'s branch the task was stacked on' }),
  onto: Type.String({ description: "that task's base: the task's base now, or what it would have been" }),
};

export const Restack = Type.Union(
  [
    Type.Object({ status: Type.Literal('restacked'), ...About, head: Type.String({ description: "the task's branch's new tip" }) }),
    Type.Object({
      status: Type.Literal('failed'),
      ...About,
      code: Type.String({ description: 'CONFLICT, or why the rebase could not run (e.g. WORKTREE_DIRTY)' }),
      message: Type.String(),
      files: Type.Array(Type.String(), { description: 'the files in conflict' }),
    }),
  ],
  { $id: 'Restack' },
);
export type Restack = Static<typeof Restack>;
