import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';
import { TurnRef } from './session.ts';

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

// One end of what changes and diff compare (DESIGN §17): the merge-base with the base, the
// worktree as it is, or a recorded turn.
export const TURN_SIDE_PATTERN = '^(base|work|turn:[1-9][0-9]{0,8})$';
const Side = (what: string) => Type.Optional(Type.String({ pattern: TURN_SIDE_PATTERN, description: `${what}: base (the merge-base), work (the worktree as it is) or turn:N` }));
export type Side = 'base' | 'work' | { turn: number };

// `turn:N` as {turn: N}; the query schema has checked its shape.
export function parseSide(s: string | undefined, dflt: 'base' | 'work'): Side {
  if (s === undefined) return dflt;
  return s.startsWith('turn:') ? { turn: Number(s.slice(5)) } : (s as 'base' | 'work');
}

export const ChangesQuery = Type.Object({ from: Side('the older end, default base'), to: Side('the newer end, default work') }, { additionalProperties: false });
export type ChangesQuery = Static<typeof ChangesQuery>;
// The ends of changes and diff once parsed (parseSide); either left out is its default.
export type Range = { [K in keyof ChangesQuery]?: Side };

export const DiffQuery = Type.Object(
  {
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000]*$', description: "one file's diff: its path in the worktree, literally" })),
    from: Side('the older end, default base'),
    to: Side('the newer end, default work'),
  },
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

// A recorded turn of a task (DESIGN §17), as GET /api/tasks/:id/turns lists them.
export const Turn = Type.Object(
  {
    n: TurnRef.properties.n,
    commit: TurnRef.properties.commit,
    session_id: Type.Union([Id, Type.Null()], { description: 'the agent session whose end recorded it; null for the state a restore saved' }),
    restored: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'for the state a restore saved first: the turn it restored' }),
    head: Type.String({ description: 'HEAD when it was recorded (the branch is never moved by a restore)' }),
    at: Timestamp,
    files: Type.Integer({ minimum: 0, description: 'files that differ from the previous turn (the first: from HEAD then)' }),
  },
  { $id: 'Turn' },
);
export type Turn = Static<typeof Turn>;
export const TurnList = Type.Array(Turn);
export type TurnList = Static<typeof TurnList>;

export const RestoreBody = Type.Object({ turn: Type.Integer({ minimum: 1, maximum: 999999999, description: 'the turn whose files and index come back' }) }, { additionalProperties: false, $id: 'RestoreBody' });
export type RestoreBody = Static<typeof RestoreBody>;

export const RestoreResult = Type.Object(
  {
    saved: Turn,
    restored: Turn,
  },
  { $id: 'RestoreResult', description: 'saved: the state before, recorded as a turn of its own (restore it to undo); restored: the turn now in the worktree' },
);
export type RestoreResult = Static<typeof RestoreResult>;
