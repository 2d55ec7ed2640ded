import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TEXT_PATTERN } from './common.ts';
import { Mode, TimeoutS } from './config.ts';
import { Land } from './automation.ts';
import { Prompt } from './session.ts';

// Work that arrives (DESIGN §20): a project's watch of a repository's labelled issues, and the
// issue a task was made from.

// The issue a task was made from (DESIGN §20), on the task as `issue`.
export const IssueRef = Type.Object(
  {
    provider: Type.Literal('github'),
    repository: Type.String({ description: 'owner/name' }),
    number: Type.Integer({ minimum: 1 }),
    url: Type.String(),
    title: Type.String(),
  },
  { $id: 'IssueRef', additionalProperties: false },
);
export type IssueRef = Static<typeof IssueRef>;

export const IntakeSession = Type.Object(
  {
    prompt: Type.Optional(Prompt),
    agent: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' })),
    mode: Type.Optional(Mode),
    timeout_s: Type.Optional(TimeoutS),
  },
  {
    additionalProperties: false,
    description: "the session each issue's task starts: `prompt` is the instructions around the issue's text (quoted as data); mode default edit",
  },
);
export type IntakeSession = Static<typeof IntakeSession>;

// What the API and .grove.json `intake` give. `provider`, `label` and `interval_s` are checked by
// the service (422 INTAKE_INVALID): an unknown provider, an empty label, an interval under 1.
export const DeclaredIntake = Type.Object(
  {
    provider: Type.String({ maxLength: 64, pattern: TEXT_PATTERN, description: '"github" (GitHub or GitHub Enterprise)' }),
    repository: Type.Optional(Type.String({ maxLength: 201, pattern: TEXT_PATTERN, description: "owner/name; default the project's origin on GitHub" })),
    label: Type.String({ maxLength: 100, pattern: TEXT_PATTERN, description: 'an open issue carrying this label becomes a task, once' }),
    session: Type.Optional(IntakeSession),
    land: Type.Optional(Land),
    interval_s: Type.Optional(Type.Number({ maximum: 86400, description: 'how often the repository is polled, in seconds (default 60, at least 1)' })),
  },
  { additionalProperties: false },
);
export type DeclaredIntake = Static<typeof DeclaredIntake>;
export const CreateIntake = Type.Object(DeclaredIntake.properties, { additionalProperties: false, $id: 'CreateIntake' });
export type CreateIntake = Static<typeof CreateIntake>;

// How the last poll went: `changed` (a 200), `not_modified` (a 304 for every list), or why not.
export const PollOutcome = Type.Union([
  Type.Literal('changed'),
  Type.Literal('not_modified'),
  Type.Literal('no_token'),
  Type.Literal('unauthorized'),
  Type.Literal('rate_limited'),
  Type.Literal('not_found'),
  Type.Literal('failed'),
]);
export type PollOutcome = Static<typeof PollOutcome>;

export const IntakeItemOutcome = Type.Union([Type.Literal('claimed'), Type.Literal('taken'), Type.Literal('refused'), Type.Literal('failed')]);
export type IntakeItemOutcome = Static<typeof IntakeItemOutcome>;

// An issue's label event as intake dealt with it: taken (its task), refused (why), or failed.
export const IntakeItem = Type.Object({
  repository: Type.String(),
  number: Type.Integer(),
  title: Type.String(),
  url: Type.String(),
  label_event: Type.String({ description: "the id of the issue's label event this is about: a label removed and added again is a new one" }),
  actor: Type.Union([Type.String(), Type.Null()], { description: 'who added the label' }),
  outcome: IntakeItemOutcome,
  reason: Type.Union([Type.String(), Type.Null()]),
  task_id: Type.Union([Id, Type.Null()]),
  session_id: Type.Union([Id, Type.Null()]),
  created_at: Timestamp,
});
export type IntakeItem = Static<typeof IntakeItem>;

export const Intake = Type.Object(
  {
    project_id: Id,
    provider: Type.Literal('github'),
    repository: Type.String(),
    label: Type.String(),
    session: IntakeSession,
    land: Land,
    interval_s: Type.Number(),
    source: Type.Union([Type.Literal('api'), Type.Literal('file')]),
    created_at: Timestamp,
    state: Type.Union([Type.Literal('polling'), Type.Literal('unauthorized'), Type.Literal('rate_limited'), Type.Literal('failing')], {
      description: 'polling; unauthorized: the token is refused or missing, no poll until it changes; rate_limited: until the limit resets; failing: GitHub errs or does not answer',
    }),
    last_poll: Type.Union([
      Type.Object({ at: Timestamp, outcome: PollOutcome, error: Type.Union([Type.String(), Type.Null()]), until: Type.Union([Timestamp, Type.Null()]) }),
      Type.Null(),
    ]),
    next_poll_at: Type.Union([Timestamp, Type.Null()]),
    items: Type.Array(IntakeItem, { description: 'what it took or refused and why, newest first (the last 100)' }),
  },
  { $id: 'Intake' },
);
export type Intake = Static<typeof Intake>;
