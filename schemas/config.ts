import { Type, type Static } from '@sinclair/typebox';
import { TEXT_PATTERN } from './common.ts';

export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

const EnvMap = Type.Record(Type.String({ pattern: ENV_NAME_PATTERN }), Type.String({ pattern: '^[^\\u0000]*$' }), {
  additionalProperties: false,
});

export const AgentDefinition = Type.Object(
  {
    command: Type.Array(Type.String({ minLength: 1, pattern: '^[^\\u0000]*$' }), { minItems: 1 }),
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
    port_range: Type.Optional(Type.Tuple([TcpPort, TcpPort])),
    setup_timeout_s: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86400 })),
  },
  { additionalProperties: false, $id: 'UserConfig' },
);
export type UserConfig = Static<typeof UserConfig>;
