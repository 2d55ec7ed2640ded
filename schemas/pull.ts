import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TEXT_PATTERN } from './common.ts';

// A task's pull request (DESIGN §20): opened by grove on the task's branch, then followed until it
// merges or closes; each review, comment or failed check grove acted on is a feedback round.

export const PullState = Type.Union([Type.Literal('open'), Type.Literal('merged'), Type.Literal('closed')]);
export type PullState = Static<typeof PullState>;

export const FeedbackKind = Type.Union([Type.Literal('review'), Type.Literal('review_comment'), Type.Literal('comment'), Type.Literal('check')], {
  description: 'a review asking for changes, a review comment or an issue comment of a collaborator, or a failed check run',
});
export type FeedbackKind = Static<typeof FeedbackKind>;

export const FeedbackRound = Type.Object(
  {
    kind: FeedbackKind,
    source_ids: Type.Array(Type.Integer(), { description: "GitHub's ids of what the round answers (reviews, comments or check runs)" }),
    author: Type.Union([Type.String(), Type.Null()], { description: 'who asked (the check name for a check)' }),
    at: Timestamp,
    session_id: Id,
    pushed_commit: Type.Union([Type.String(), Type.Null()], { description: 'the branch tip pushed when the follow-up ended; null until then, or when nothing was pushed' }),
    outcome: Type.Union([Type.Literal('pending'), Type.Literal('pushed'), Type.Literal('failed')], { description: 'the follow-up runs, or its commits were pushed, or it or the push failed' }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type FeedbackRound = Static<typeof FeedbackRound>;

export const PullRequest = Type.Object(
  {
    task_id: Id,
    repository: Type.String({ description: 'owner/name' }),
    number: Type.Integer({ minimum: 1 }),
    url: Type.String(),
    state: PullState,
    head: Type.String({ description: "the task's branch" }),
    base: Type.String(),
    issue_number: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'the issue it fixes, when the task was made from one' }),
    fix_tries: Type.Integer({ minimum: 0, description: 'how many feedback rounds grove answers at most' }),
    fix_tries_used: Type.Integer({ minimum: 0 }),
    following: Type.Boolean({ description: 'whether grove still reads its reviews, comments and checks' }),
    stopped_reason: Type.Union([Type.String(), Type.Null()], { description: 'why grove stopped following it before it merged or closed' }),
    fix_session: Type.Union([Id, Type.Null()], { description: 'the follow-up session in flight' }),
    rounds: Type.Array(FeedbackRound),
    opened_at: Timestamp,
    closed_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'PullRequest', additionalProperties: false },
);
export type PullRequest = Static<typeof PullRequest>;

export const OpenPull = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: TEXT_PATTERN, description: "default the issue's title, else the task's name" })),
    fix_tries: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'feedback rounds grove answers at most (default 3)' })),
  },
  { additionalProperties: false },
);
export type OpenPull = Static<typeof OpenPull>;
