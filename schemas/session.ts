import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';
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
  },
  { $id: 'Session' },
);
export type Session = Static<typeof Session>;

export const SessionList = Type.Array(Session);

export const CreateSession = Type.Object(
  {
    agent: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' })),
    prompt: Type.Optional(Type.String({ maxLength: 262144, pattern: '^[^\\u0000]*$' })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 65536, pattern: '^[^\\u0000]*$' }), { maxItems: 256 })),
  },
  { additionalProperties: false, $id: 'CreateSession' },
);
export type CreateSession = Static<typeof CreateSession>;

export const KillResult = Type.Object({ status: Type.Literal('killed') }, { $id: 'KillResult' });

export const OutputQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0 })),
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
