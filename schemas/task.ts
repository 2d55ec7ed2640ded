import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TEXT_PATTERN, UUID_PATTERN } from './common.ts';
import { OutputLine } from './output.ts';
import { CreateSession, Prompt, Session } from './session.ts';
import { IssueRef } from './intake.ts';

export const TaskStatus = Type.Union([
  Type.Literal('setting_up'),
  Type.Literal('ready'),
  Type.Literal('setup_failed'),
  Type.Literal('archived'),
]);
export type TaskStatus = Static<typeof TaskStatus>;

export const Task = Type.Object(
  {
    id: Id,
    name: Type.String(),
    branch: Type.String(),
    worktree_path: Type.String({ description: 'relative to the project path, ends in /' }),
    status: TaskStatus,
    project_id: Id,
    host_id: Type.String({ pattern: UUID_PATTERN, description: "the host whose disk holds its worktree: its project's" }),
    base: Type.String({ description: 'the ref the branch started from' }),
    base_commit: Type.String({ description: 'the commit the branch started from' }),
    ports: Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Integer()),
    created_at: Timestamp,
    archived_at: Type.Union([Timestamp, Type.Null()]),
    merged_at: Type.Union([Timestamp, Type.Null()], { description: "when the task's branch was last merged into its base" }),
    merged_commit: Type.Union([Type.String(), Type.Null()], { description: 'the commit its base branch was at after that merge' }),
    pooled: Type.Boolean({ description: 'true when the task was taken ready from the warm pool (DESIGN §16): its setup ran ahead' }),
    issue: Type.Union([IssueRef, Type.Null()], { description: 'the issue the task was made from (DESIGN §20)' }),
    worktree_missing: Type.Boolean({
      description: 'true when a live task\'s worktree folder is gone (deleted by hand); DELETE cleans up',
    }),
  },
  { $id: 'Task' },
);
export type Task = Static<typeof Task>;

export const TaskList = Type.Array(Task);
export type TaskList = Static<typeof TaskList>;

// POST /api/tasks with `session` (DESIGN §17): the task and its first session as it then was.
export const CreatedTask = Type.Object({ ...Task.properties, session: Type.Optional(Session) }, { $id: 'CreatedTask' });
export type CreatedTask = Static<typeof CreatedTask>;

// No leading '-' (never an option to git), no control characters or lone surrogates (as in
// TEXT_PATTERN); git's own rules come after.
const REF_INPUT = '^(?!-)[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff]*$';

export const CreateTask = Type.Object(
  {
    project_id: Id,
    name: Type.String({ minLength: 1, maxLength: 200, pattern: TEXT_PATTERN }),
    base: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: REF_INPUT })),
    branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: REF_INPUT })),
    wait: Type.Optional(Type.Boolean()),
    after: Type.Optional(
      Type.Array(Id, { minItems: 1, maxItems: 100, uniqueItems: true, description: 'with session: the tasks that must merge before that session starts (DESIGN §17)' }),
    ),
    session: Type.Optional(
      Type.Object(
        { ...CreateSession.properties, prompt: Prompt },
        { additionalProperties: false, description: "the task's first session: queued at once, started once the task is ready and every task of `after` has merged" },
      ),
    ),
  },
  { additionalProperties: false, $id: 'CreateTask' },
);
export type CreateTask = Static<typeof CreateTask>;
// A creation as grove's own parts ask for it: an issue's task carries its issue (DESIGN §20); the
// API gives `issue_url`, which the route reads into this.
export type CreateTaskInput = CreateTask & { issue?: IssueRef };

// POST /api/tasks: on a project by id, or placed (DESIGN §14.2) by `repository` (a project's
// normalised origin, or an origin URL) on the online host with the fewest running sessions, or
// on the host named by `host`. Exactly one of project_id and repository.
export const CreateTaskBody = Type.Object(
  {
    ...CreateTask.properties,
    name: Type.Optional({ ...CreateTask.properties.name, description: 'required unless issue_url is given (then the issue\'s title is the default)' }),
    issue_url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, pattern: TEXT_PATTERN, description: "an issue's page (DESIGN §20): its title is the task's name, its text in the first session's prompt (`session.prompt`, if given, the instructions around it)" }),
    ),
    session: Type.Optional(
      Type.Object(
        { ...CreateSession.properties, prompt: Type.Optional(Prompt) },
        { additionalProperties: false, description: "the task's first session: queued at once, started once the task is ready and every task of `after` has merged; `prompt` is required unless issue_url is given" },
      ),
    ),
    project_id: Type.Optional(Id),
    repository: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, pattern: TEXT_PATTERN, description: 'instead of project_id: a project of this repository, on the host placement picks' }),
    ),
    host: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: TEXT_PATTERN, description: 'with repository: the name of the host to place the task on' })),
  },
  { additionalProperties: false, $id: 'CreateTaskBody' },
);
export type CreateTaskBody = Static<typeof CreateTaskBody>;

export const TaskListQuery = Type.Object({ project_id: Type.Optional(Id) }, { additionalProperties: false });
export type TaskListQuery = Static<typeof TaskListQuery>;

export const DeleteTaskQuery = Type.Object({ force: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export type DeleteTaskQuery = Static<typeof DeleteTaskQuery>;

export const SetupCommand = Type.Object({
  command: Type.String(),
  exit_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when killed by a signal' }),
  signal: Type.Union([Type.String(), Type.Null()]),
  timed_out: Type.Boolean(),
  interrupted: Type.Boolean({ description: 'true when the daemon stopped while the command ran: it was cut short, and its exit is unknown' }),
  started_at: Timestamp,
  ended_at: Type.Union([Timestamp, Type.Null()]),
});
export type SetupCommand = Static<typeof SetupCommand>;

export const TaskSetup = Type.Object(
  {
    status: TaskStatus,
    commands: Type.Array(SetupCommand),
    lines: Type.Array(OutputLine),
  },
  { $id: 'TaskSetup' },
);
export type TaskSetup = Static<typeof TaskSetup>;
