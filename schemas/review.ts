import { Type, type Static } from '@sinclair/typebox';

// A task's work since the merge-base with its base (DESIGN §9).
export const FileStatus = Type.Union([Type.Literal('added'), Type.Literal('modified'), Type.Literal('deleted'), Type.Literal('renamed'), Type.Literal('untracked')]);
export type FileStatus = Static<typeof FileStatus>;

export const ChangedFile = Type.Object(
  {
    path: Type.String(),
    old_path: Type.Optional(Type.String({ description: 'the path before a rename' })),
    status: FileStatus,
    additions: Type.Integer({ minimum: 0 }),
    deletions: Type.Integer({ minimum: 0 }),
    binary: Type.Boolean(),
  },
  { $id: 'ChangedFile' },
);
export type ChangedFile = Static<typeof ChangedFile>;

export const Changes = Type.Object(
  {
    base: Type.String(),
    merge_base: Type.String(),
    head: Type.String(),
    ahead: Type.Integer({ minimum: 0, description: "commits on the task's branch that its base lacks" }),
    behind: Type.Integer({ minimum: 0, description: "commits on the base that the task's branch lacks" }),
    uncommitted: Type.Integer({ minimum: 0, description: 'files that differ between HEAD and the worktree, untracked included' }),
    files: Type.Array(ChangedFile),
  },
  { $id: 'Changes' },
);
export type Changes = Static<typeof Changes>;

export const DiffQuery = Type.Object(
  { path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000]*$', description: "one file's diff: its path in the worktree, literally" })) },
  { additionalProperties: false },
);
export type DiffQuery = Static<typeof DiffQuery>;

export const CommitBody = Type.Object(
  { message: Type.String({ minLength: 1, maxLength: 65536, pattern: '^(?=\\s*\\S)[^\\u0000]*$' }) },
  { additionalProperties: false, $id: 'CommitBody' },
);
export type CommitBody = Static<typeof CommitBody>;

export const CommitResult = Type.Object(
  { commit: Type.String(), files: Type.Array(Type.String(), { description: 'the paths the commit changed' }) },
  { $id: 'CommitResult' },
);
export type CommitResult = Static<typeof CommitResult>;

// How a task's branch lands on its base (DESIGN §9); a merge answers the strategy it was asked.
export const MergeStrategy = Type.Union([Type.Literal('merge'), Type.Literal('squash'), Type.Literal('ff')]);
export type MergeStrategy = Static<typeof MergeStrategy>;

export const MergeBody = Type.Object(
  {
    strategy: Type.Optional(Type.Union(MergeStrategy.anyOf, { description: 'merge (default): a merge commit unless it fast-forwards' })),
    message: Type.Optional(Type.String({ minLength: 1, maxLength: 65536, pattern: '^(?=\\s*\\S)[^\\u0000]*$' })),
  },
  { additionalProperties: false, $id: 'MergeBody' },
);
export type MergeBody = Static<typeof MergeBody>;

export const MergeResult = Type.Object(
  { base: Type.String(), commit: Type.String({ description: 'where the base branch is now' }), strategy: MergeStrategy },
  { $id: 'MergeResult' },
);
export type MergeResult = Static<typeof MergeResult>;

export const PushBody = Type.Object(
  { remote: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!-)[^\\u0000-\\u001f\\u007f]*$' })) },
  { additionalProperties: false, $id: 'PushBody' },
);
export type PushBody = Static<typeof PushBody>;

export const PushResult = Type.Object({ remote: Type.String(), branch: Type.String() }, { $id: 'PushResult' });
export type PushResult = Static<typeof PushResult>;

export const Conflict = Type.Object(
  {
    task_id: Type.String(),
    with: Type.String({ description: 'another task id, or "base"' }),
    files: Type.Array(Type.String()),
  },
  { $id: 'Conflict' },
);
export type Conflict = Static<typeof Conflict>;

export const ConflictList = Type.Array(Conflict);
export type ConflictList = Static<typeof ConflictList>;
