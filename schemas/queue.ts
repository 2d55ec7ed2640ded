import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';
import { MergeStrategy } from './review.ts';

// A task in its project's merge queue (DESIGN §17), one queue per base branch, landed in order.
export const QueueState = Type.Union([Type.Literal('waiting'), Type.Literal('landing'), Type.Literal('fixing')], {
  description: 'waiting its turn; landing now (rebase, checks, merge); fixing: out until the follow-up session sent with `fix` ends',
});
export type QueueState = Static<typeof QueueState>;

export const QueueEntry = Type.Object(
  {
    task_id: Id,
    project_id: Id,
    base: Type.String({ description: "the task's base branch: the queue it is in" }),
    position: Type.Integer({ minimum: 1, description: 'its place in the queue of its base, 1 first' }),
    strategy: MergeStrategy,
    fix: Type.Boolean(),
    tries: Type.Integer({ minimum: 0, description: 'landings begun' }),
    state: QueueState,
    reason: Type.Union([Type.String(), Type.Null()], { description: 'why the last landing failed' }),
    files: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'the files in conflict, when it conflicted' }),
    output: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "the failed check's last lines" }),
    fix_session: Type.Union([Id, Type.Null()], { description: 'the follow-up session whose end puts it back' }),
    added_at: Timestamp,
  },
  { $id: 'QueueEntry' },
);
export type QueueEntry = Static<typeof QueueEntry>;

export const QueueList = Type.Array(QueueEntry, { $id: 'QueueList' });

export const QueueBody = Type.Object(
  {
    task_id: Id,
    strategy: Type.Optional(Type.Union(MergeStrategy.anyOf, { description: 'merge (default): a merge commit unless it fast-forwards' })),
    fix: Type.Optional(Type.Boolean({ description: "on a failure, send the task's latest conversation what failed and queue it again when that session ends (at most 3 times)" })),
  },
  { additionalProperties: false, $id: 'QueueBody' },
);
export type QueueBody = Static<typeof QueueBody>;

export const QueueTaskParams = Type.Object({ id: Id, task_id: Id }, { additionalProperties: false });
