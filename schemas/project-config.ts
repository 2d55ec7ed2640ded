import { Type, type Static } from '@sinclair/typebox';
import { DeclaredAutomation } from './automation.ts';
import { DeclaredIntake } from './intake.ts';
import { AllowRules, ApprovalTimeoutS, ENV_NAME_PATTERN, Mode, NetworkEntry, SandboxSetting, TimeoutS } from './config.ts';

// A config is a few lines; past this it is a mistake or an attack, not a config (`.grove.json`,
// and `.worktreeinclude` as well).
export const MAX_CONFIG_BYTES = 1024 * 1024;

const NO_NUL = '^[^\\u0000]*$';
// A command with something in it: a blank one runs nothing and succeeds, so it can only be a
// mistake (a template that left it empty). The lookahead keeps the match linear in length.
const COMMAND = '^(?=\\s*\\S)[^\\u0000]*$';

// A service's name: a path segment of /api/tasks/:id/services/:name, shown as a session's agent.
export const SERVICE_NAME = '^[a-z0-9][a-z0-9_-]{0,63}$';

export const ServiceConfig = Type.Object(
  {
    command: Type.String({ minLength: 1, pattern: COMMAND, description: 'run with sh -c in the worktree, with the task environment and ports' }),
    autostart: Type.Optional(Type.Boolean({ description: 'start it when setup succeeds' })),
  },
  { additionalProperties: false },
);
export type ServiceConfig = Static<typeof ServiceConfig>;

// The warm pool (DESIGN §16): `size` tasks prepared ahead at the default base, each replaced
// after `ttl_s` seconds when given.
export const PoolConfig = Type.Object(
  {
    size: Type.Integer({ minimum: 1, maximum: 8, description: 'how many tasks are kept prepared ahead' }),
    ttl_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 * 86400, description: 'a prepared task older than this is replaced' })),
  },
  { additionalProperties: false },
);
export type PoolConfig = Static<typeof PoolConfig>;

// A project's `.grove.json` (DESIGN §2, §10); a missing file is an empty config.
// The project's sandbox (DESIGN §18): the setting alone, or the setting with what the defaults
// are extended by. Paths are the project's (relative to its root) or the user's (`~/…`).
const SandboxPath = Type.String({ minLength: 1, maxLength: 4096, pattern: NO_NUL });
export const ProjectSandbox = Type.Object(
  {
    enabled: Type.Optional(SandboxSetting),
    write: Type.Optional(Type.Array(SandboxPath, { maxItems: 256, description: 'more paths a confined agent may write: inside the project or under ~' })),
    read_deny: Type.Optional(Type.Array(SandboxPath, { maxItems: 256, description: 'more paths a confined agent may not read' })),
    network: Type.Optional(Type.Array(NetworkEntry, { maxItems: 256, description: 'more hosts a confined agent may reach: host, *.host, host:port or an IP' })),
  },
  { additionalProperties: false },
);
export type ProjectSandbox = Static<typeof ProjectSandbox>;

export const ProjectConfig = Type.Object(
  {
    setup: Type.Optional(Type.Array(Type.String({ minLength: 1, pattern: COMMAND }))),
    ports: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), { uniqueItems: true })),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: ENV_NAME_PATTERN }), Type.String({ pattern: NO_NUL }), { additionalProperties: false }),
    ),
    agent: Type.Optional(Type.String({ minLength: 1, pattern: '^[^\\u0000-\\u001f\\u007f]*$' })),
    mode: Type.Optional(Mode),
    timeout_s: Type.Optional(TimeoutS),
    copy: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 4096, pattern: COMMAND, description: 'a gitignore pattern of untracked files to copy into new worktrees' }), {
        maxItems: 1000,
      }),
    ),
    services: Type.Optional(Type.Record(Type.String({ pattern: SERVICE_NAME }), ServiceConfig, { additionalProperties: false })),
    teardown: Type.Optional(Type.Array(Type.String({ minLength: 1, pattern: COMMAND }))),
    allow: Type.Optional(AllowRules),
    approval_timeout_s: Type.Optional(ApprovalTimeoutS),
    pool: Type.Optional(PoolConfig),
    sandbox: Type.Optional(Type.Union([SandboxSetting, ProjectSandbox], { description: 'whether agent sessions are confined, and what they may write, read and reach (DESIGN §18)' })),
    automations: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff]+$' }), DeclaredAutomation, {
        additionalProperties: false,
        description: 'automations (DESIGN §19) by name: made, changed and removed as this changes',
      }),
    ),
    github: Type.Optional(
      Type.Object(
        { pass_token: Type.Optional(Type.Boolean({ description: "pass the daemon's GH_TOKEN and GITHUB_TOKEN on to agent sessions (default false: grove's token is not the agent's)" })) },
        { additionalProperties: false },
      ),
    ),
    intake: Type.Optional({ ...DeclaredIntake, description: "the project's watch of its repository's labelled issues (DESIGN §20), as POST /api/projects/:id/intake takes it" }),
    check: Type.Optional(
      Type.Array(Type.String({ minLength: 1, pattern: COMMAND }), { description: "the merge queue's checks (DESIGN §17): run in order in the task's worktree after its rebase; the first failure takes it out" }),
    ),
  },
  { additionalProperties: false, $id: 'ProjectConfig' },
);
export type ProjectConfig = Static<typeof ProjectConfig>;
