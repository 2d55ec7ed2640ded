import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TEXT_PATTERN } from './common.ts';
import { Mode, TimeoutS } from './config.ts';
import { Prompt, SessionResult } from './session.ts';

// Automations (DESIGN §19): agent work started on a schedule, each scheduled time run once.

const CronSchedule = Type.Object(
  {
    cron: Type.String({ minLength: 1, maxLength: 200, pattern: TEXT_PATTERN, description: '5 fields (minute first) or 6 (seconds first)' }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: TEXT_PATTERN, description: "an IANA zone; default the machine's, filled in when stored" })),
  },
  { additionalProperties: false },
);
const AtSchedule = Type.Object(
  { at: Type.String({ minLength: 1, maxLength: 100, pattern: TEXT_PATTERN, description: 'one run at this ISO 8601 time, with its offset or Z' }) },
  { additionalProperties: false },
);
export const Schedule = Type.Union([CronSchedule, AtSchedule], { $id: 'Schedule' });
export type Schedule = Static<typeof Schedule>;

export const AutomationSession = Type.Object(
  {
    prompt: Prompt,
    agent: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' })),
    mode: Type.Optional(Mode),
    timeout_s: Type.Optional(TimeoutS),
  },
  { additionalProperties: false, description: 'the session each run starts; {precheck_output}, {date} and {run_id} in the prompt are filled in' },
);
export type AutomationSession = Static<typeof AutomationSession>;

export const AutomationTask = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 150, pattern: TEXT_PATTERN, description: 'default "<automation name> <date>"; {date} and {run_id} are filled in' })),
    base: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!-)[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff]*$' })),
  },
  { additionalProperties: false },
);

export const Missed = Type.Object(
  {
    policy: Type.Union([Type.Literal('latest'), Type.Literal('skip')], { description: 'latest: the latest missed time within grace_s runs once; skip: none runs' }),
    grace_s: Type.Integer({ minimum: 0, maximum: 30 * 86400 }),
  },
  { additionalProperties: false },
);
export type Missed = Static<typeof Missed>;

export const Land = Type.Union([Type.Literal('none'), Type.Literal('queue'), Type.Literal('pr')], {
  description: 'none (default): the task waits for review; queue: the merge queue with fix (§17); pr: a pull request (§20)',
});
export const Overlap = Type.Union([Type.Literal('skip'), Type.Literal('queue')], { description: 'while the previous run still runs: skip (default) or wait for it' });

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: TEXT_PATTERN });
const Precheck = Type.String({ minLength: 1, maxLength: 65536, pattern: '^[^\\u0000]*$', description: "a shell command run in the project's checkout first: a non-zero exit skips the run" });

const fields = {
  schedule: Schedule,
  session: AutomationSession,
  task: Type.Optional(AutomationTask),
  precheck: Type.Optional(Type.Union([Precheck, Type.Null()])),
  land: Type.Optional(Land),
  missed: Type.Optional(Missed),
  overlap: Type.Optional(Overlap),
  enabled: Type.Optional(Type.Boolean()),
};
const definition = { name: Name, ...fields };

// An automation declared in `.grove.json` `automations`, keyed by its name (DESIGN §19).
export const DeclaredAutomation = Type.Object(fields, { additionalProperties: false });
export type DeclaredAutomation = Static<typeof DeclaredAutomation>;

export const CreateAutomation = Type.Object(
  {
    project_id: Type.Optional(Id),
    repository: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, pattern: TEXT_PATTERN, description: "instead of project_id, on a team: run by whichever host with a project of this repository claims each time (made on a host that has one)" }),
    ),
    ...definition,
  },
  { additionalProperties: false, $id: 'CreateAutomation' },
);
export type CreateAutomation = Static<typeof CreateAutomation>;

export const PatchAutomation = Type.Partial(Type.Object(definition), { additionalProperties: false, $id: 'PatchAutomation' });
export type PatchAutomation = Static<typeof PatchAutomation>;

export const RunStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('precheck'), Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('skipped')],
  { description: 'pending → (precheck →) running → succeeded | failed | skipped' },
);
export type RunStatus = Static<typeof RunStatus>;
export const ACTIVE_RUN_STATUSES = ['pending', 'precheck', 'running'] as const satisfies readonly RunStatus[];

export const SkipReason = Type.Union([Type.Literal('precheck'), Type.Literal('overlap'), Type.Literal('missed'), Type.Literal('disabled')]);
export type SkipReason = Static<typeof SkipReason>;

export const RunChanges = Type.Object({
  files: Type.Integer({ minimum: 0, description: 'files that differ from the base, uncommitted ones included' }),
  additions: Type.Integer({ minimum: 0 }),
  deletions: Type.Integer({ minimum: 0 }),
  commits: Type.Integer({ minimum: 0, description: "commits on the task's branch that its base lacks" }),
});
export type RunChanges = Static<typeof RunChanges>;

export const AutomationRun = Type.Object(
  {
    id: Id,
    automation_id: Id,
    project_id: Type.Union([Id, Type.Null()], { description: 'the project it runs in (a host of the repository, for a team automation); null for a run skipped before a host took it' }),
    scheduled_for: Timestamp,
    trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')], { description: 'schedule, or manual: POST …/runs' }),
    status: RunStatus,
    reason: Type.Union([SkipReason, Type.Null()], { description: 'why a run was skipped' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'why a run failed' }),
    missed: Type.Integer({ minimum: 0, description: 'earlier scheduled times folded into this run (or skipped by it) while the daemon was down or the machine asleep' }),
    precheck: Type.Union([Type.Object({ exit_code: Type.Union([Type.Integer(), Type.Null()]), output: Type.String() }), Type.Null()], {
      description: "the precheck's exit code and last output",
    }),
    task_id: Type.Union([Id, Type.Null()]),
    session_id: Type.Union([Id, Type.Null()]),
    result: Type.Union([SessionResult, Type.Null()], { description: "its session's result (cost, tokens) once it ended" }),
    changes: Type.Union([RunChanges, Type.Null()], { description: "the task's changes when the session ended" }),
    created_at: Timestamp,
    started_at: Type.Union([Timestamp, Type.Null()], { description: 'when its session was started' }),
    ended_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'AutomationRun' },
);
export type AutomationRun = Static<typeof AutomationRun>;
export const AutomationRunList = Type.Array(AutomationRun, { $id: 'AutomationRunList' });

export const Automation = Type.Object(
  {
    id: Id,
    project_id: Type.Union([Id, Type.Null()], { description: 'null for a team automation of a repository' }),
    repository: Type.Union([Type.String(), Type.Null()], { description: 'a team automation: any host with a project of it may run each time' }),
    name: Type.String(),
    schedule: Schedule,
    session: AutomationSession,
    task: AutomationTask,
    precheck: Type.Union([Type.String(), Type.Null()]),
    land: Land,
    missed: Missed,
    overlap: Overlap,
    enabled: Type.Boolean(),
    source: Type.Union([Type.Literal('api'), Type.Literal('file')], { description: "file: declared in the project's .grove.json, which it follows when the file changes" }),
    next_run_at: Type.Union([Timestamp, Type.Null()], { description: 'the next scheduled time; null when paused or when an `at` has passed' }),
    last_run: Type.Union([AutomationRun, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Automation' },
);
export type Automation = Static<typeof Automation>;
export const AutomationList = Type.Array(Automation, { $id: 'AutomationList' });

export const AutomationListQuery = Type.Object({ project_id: Type.Optional(Id) }, { additionalProperties: false });
export type AutomationListQuery = Static<typeof AutomationListQuery>;
