import { Type, type Static } from '@sinclair/typebox';
import { TEXT_PATTERN } from './common.ts';

export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

const EnvMap = Type.Record(Type.String({ pattern: ENV_NAME_PATTERN }), Type.String({ pattern: '^[^\\u0000]*$' }), {
  additionalProperties: false,
});

// What a session may do in its worktree (DESIGN §8): read and answer, edit files, or the
// agent's own no-prompt mode.
export const Mode = Type.Union([Type.Literal('read'), Type.Literal('edit'), Type.Literal('full')]);
export type Mode = Static<typeof Mode>;

const Arg = Type.String({ minLength: 1, pattern: '^[^\\u0000]*$' });

// An agent as data (DESIGN §5, §8): `{prompt}` in `command` is replaced by the prompt; a mode's
// arguments, then the request's args, go just before it. An agent without `modes` has `edit` only.
export const AgentDefinition = Type.Object(
  {
    command: Type.Array(Arg, { minItems: 1 }),
    modes: Type.Optional(
      Type.Object(
        { read: Type.Optional(Type.Array(Arg)), edit: Type.Optional(Type.Array(Arg)), full: Type.Optional(Type.Array(Arg)) },
        { additionalProperties: false },
      ),
    ),
    env: Type.Optional(EnvMap),
  },
  { additionalProperties: false },
);
export type AgentDefinition = Static<typeof AgentDefinition>;

const TcpPort = Type.Integer({ minimum: 1, maximum: 65535 });

// The user config file (DESIGN §2); every field is optional.
export const UserConfig = Type.Object(
  {
    port: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Literal('off')])),
    agents: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }), AgentDefinition, { additionalProperties: false }),
    ),
    default_agent: Type.Optional(Type.String({ minLength: 1, pattern: TEXT_PATTERN })),
    default_mode: Type.Optional(Mode),
    port_range: Type.Optional(Type.Tuple([TcpPort, TcpPort])),
    setup_timeout_s: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86400 })),
  },
  { additionalProperties: false, $id: 'UserConfig' },
);
export type UserConfig = Static<typeof UserConfig>;
