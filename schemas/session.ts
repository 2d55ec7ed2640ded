import { Type, type Static } from '@sinclair/typebox';
import { Id, MAX_ARG_BYTES, Timestamp } from './common.ts';
import { Mode } from './config.ts';
import { OutputLine } from './output.ts';

export const SessionStatus = Type.Union([
  Type.Literal('starting'),
  Type.Literal('running'),
  Type.Literal('exited'),
  Type.Literal('failed'),
  Type.Literal('killed'),
  Type.Literal('lost'),
]);
export type SessionStatus = Static<typeof SessionStatus>;

export const Session = Type.Object(
  {
    id: Id,
    task_id: Id,
    agent: Type.String(),
    command: Type.Array(Type.String(), { description: 'the command line the agent was started with' }),
    status: SessionStatus,
    pid: Type.Union([Type.Integer(), Type.Null()]),
    created_at: Timestamp,
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    ended_at: Type.Union([Timestamp, Type.Null()]),
    mode: Mode,
    prompt: Type.Union([Type.String(), Type.Null()], { description: 'the prompt the session was started with' }),
  },
  { $id: 'Session' },
);
export type Session = Static<typeof Session>;

export const SessionList = Type.Array(Session);

// The largest output line seq (a 32-bit integer in the store).
export const MAX_SEQ = 2147483647;

export const CreateSession = Type.Object(
  {
    agent: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' })),
    // A longer prompt could only make a session that fails to start (E2BIG). The route checks
    // the UTF-8 size; the character limit here is the same number.
    prompt: Type.Optional(Type.String({ maxLength: MAX_ARG_BYTES, pattern: '^[^\\u0000]*$', description: 'at most 128 KiB of UTF-8' })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 65536, pattern: '^[^\\u0000]*$' }), { maxItems: 256 })),
    mode: Type.Optional(Mode),
  },
  { additionalProperties: false, $id: 'CreateSession' },
);
export type CreateSession = Static<typeof CreateSession>;

export const KillResult = Type.Object({ status: Type.Literal('killed') }, { $id: 'KillResult' });

export const OutputQuery = Type.Object(
  {
    // seq is a 32-bit integer column: a larger `after` would fail in the store, not match nothing.
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQ })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })),
  },
  { additionalProperties: false },
);

export const OutputPage = Type.Object(
  {
    lines: Type.Array(OutputLine),
    next: Type.Integer({ description: 'the `after` for the next page: the last seq returned, or `after` when none' }),
  },
  { $id: 'OutputPage' },
);

export const Agent = Type.Object(
  {
    name: Type.String(),
    command: Type.Array(Type.String()),
    available: Type.Boolean(),
    builtin: Type.Boolean(),
  },
  { $id: 'Agent' },
);
export const AgentList = Type.Array(Agent);
