import { Type, type Static } from '@sinclair/typebox';
import { TEXT_PATTERN } from './common.ts';
import { EventType } from './event.ts';
import { MODES } from './modes.ts';

export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

const EnvMap = Type.Record(Type.String({ pattern: ENV_NAME_PATTERN }), Type.String({ pattern: '^[^\\u0000]*$' }), {
  additionalProperties: false,
});

// What a session may do in its worktree (DESIGN §8): read and answer, edit files, or the
// agent's own no-prompt mode.
export const Mode = Type.Union(MODES.map((m) => Type.Literal(m)));
export type Mode = Static<typeof Mode>;

const Arg = Type.String({ minLength: 1, pattern: '^[^\\u0000]*$' });

// The output dialects grove reads (DESIGN §8): where a CLI prints its own session id, its
// result and its usage limits. Amp speaks `claude`; `acp` is what `grove acp-bridge` prints.
export const Format = Type.Union([Type.Literal('claude'), Type.Literal('codex'), Type.Literal('gemini'), Type.Literal('opencode'), Type.Literal('cursor'), Type.Literal('copilot'), Type.Literal('qwen'), Type.Literal('acp')]);
export type Format = Static<typeof Format>;

// How long a session may run before it is killed (DESIGN §8), in seconds.
export const TimeoutS = Type.Number({ exclusiveMinimum: 0, maximum: 7 * 86400 });

// How long an approval waits for the person before it expires (DESIGN §15), in seconds.
export const ApprovalTimeoutS = Type.Number({ exclusiveMinimum: 0, maximum: 7 * 86400, description: 'a pending approval expires after this many seconds (default: it waits)' });

// Whether agent sessions are confined (DESIGN §18): "auto" where this machine can, true or refused
// with SANDBOX_UNAVAILABLE, false never.
export const SandboxSetting = Type.Union([Type.Literal('auto'), Type.Boolean()], { description: '"auto" (default): confined where this machine can; true: confined or refused; false: not confined' });
export type SandboxSetting = Static<typeof SandboxSetting>;

// A host a confined agent may reach (DESIGN §18): `host`, `*.host`, `host:port`, an IP, `ip:port`
// or `[ipv6]:port`. The pattern takes the shape; daemon/sandbox/allow.ts reads it.
export const NetworkEntry = Type.String({ minLength: 1, maxLength: 260, pattern: '^[^\\u0000-\\u0020/]+$' });

// Claude Code's permission rules (DESIGN §15): `Bash(npm test:*)`, `Bash(git status)`, `Edit`,
// `WebFetch(domain:docs.rs)`; daemon/approvals/rules.ts reads them.
export const AllowRules = Type.Array(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[A-Za-z0-9_.*-]+(\\([^\\u0000]*\\))?$' }), { maxItems: 1000 });

// An agent as data (DESIGN §5, §8): `{prompt}` in `command` is replaced by the prompt; a mode's
// arguments, then the request's args, go just before it. An agent without `modes` has `edit` only.
// `{session}` in `command` pins a fresh id; in `resume` and `interactive` it is the conversation's id.
// With `protocol: "acp"` the command is an Agent Client Protocol agent on stdio: grove runs it
// under `grove acp-bridge`, which sends the prompt, asks the person for its permission requests,
// continues its session for a follow-up (no `resume` needed) and prints what the `acp` dialect reads.
export const AgentDefinition = Type.Object(
  {
    command: Type.Array(Arg, { minItems: 1 }),
    protocol: Type.Optional(Type.Literal('acp', { description: 'the command speaks the Agent Client Protocol on stdio (grove drives it through its ACP bridge)' })),
    acp_modes: Type.Optional(
      Type.Object(
        { read: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })), edit: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })), full: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })) },
        { additionalProperties: false, description: 'with protocol "acp": the ACP session mode (session/set_mode) per grove mode' },
      ),
    ),
    resume: Type.Optional(Type.Array(Arg, { minItems: 1, description: 'the command that continues a conversation; `{session}` is its id' })),
    interactive: Type.Optional(
      Type.Array(Arg, {
        minItems: 1,
        description: "the command that resumes a conversation in the person's own terminal (grove takeover, DESIGN §15); `{session}` is its id; no prompt, no mode",
      }),
    ),
    terminal: Type.Optional(
      Type.Array(Arg, {
        minItems: 1,
        description:
          'the interactive command that starts a conversation in a terminal session (DESIGN §21), `{prompt}` and `{session}` as in `command`; a follow-up there runs `interactive` with the prompt after `--`',
      }),
    ),
    terminal_resume: Type.Optional(
      Type.Array(Arg, {
        minItems: 1,
        description: 'the interactive command that continues a conversation with a prompt in a terminal session, `{session}` and `{prompt}` as in `resume`; default: `interactive`, then `--` and the prompt',
      }),
    ),
    terminal_modes: Type.Optional(
      Type.Object(
        { read: Type.Optional(Type.Array(Arg)), edit: Type.Optional(Type.Array(Arg)), full: Type.Optional(Type.Array(Arg)) },
        { additionalProperties: false, description: "with `terminal`: each mode's arguments for the interactive program, where they are not those of `modes` (an ACP agent's modes are ACP session modes)" },
      ),
    ),
    session_id_field: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "the top-level JSON field of the agent's session id in its output" })),
    format: Type.Optional(Format),
    modes: Type.Optional(
      Type.Object(
        { read: Type.Optional(Type.Array(Arg)), edit: Type.Optional(Type.Array(Arg)), full: Type.Optional(Type.Array(Arg)) },
        { additionalProperties: false },
      ),
    ),
    env: Type.Optional(EnvMap),
    sandbox: Type.Optional(
      Type.Object(
        {
          write: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 4096, pattern: '^(~/|/)[^\\u0000]+$' }), { maxItems: 64, description: 'its own state folders (`~/.claude`, or absolute), writable when it is confined; made when missing' })),
          hosts: Type.Optional(Type.Array(NetworkEntry, { maxItems: 64, description: "its provider's hosts, reachable when it is confined" })),
          refuse: Type.Optional(Type.Array(NetworkEntry, { maxItems: 64, description: 'hosts the CLI reaches on its own (its telemetry), refused without asking when it is confined; each refusal still recorded' })),
        },
        { additionalProperties: false, description: 'what the agent needs when it is confined (DESIGN §18)' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type AgentDefinition = Static<typeof AgentDefinition>;

const TcpPort = Type.Integer({ minimum: 1, maximum: 65535 });

// A command run for matching events, with the event's JSON on stdin (DESIGN §11).
export const Hook = Type.Object(
  {
    on: Type.Array(Type.Union([EventType, Type.Literal('*')]), { minItems: 1, description: 'event types, or "*" for all' }),
    command: Type.Array(Arg, { minItems: 1 }),
    timeout_s: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600, description: 'default 30' })),
  },
  { additionalProperties: false },
);
export type Hook = Static<typeof Hook>;

// The user config file (DESIGN §2); every field is optional.
export const UserConfig = Type.Object(
  {
    port: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Literal('off')])),
    host_name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: TEXT_PATTERN, description: "this daemon's name among the hosts of its store (default the machine's host name)" }),
    ),
    agents: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }), AgentDefinition, { additionalProperties: false }),
    ),
    default_agent: Type.Optional(Type.String({ minLength: 1, pattern: TEXT_PATTERN })),
    default_mode: Type.Optional(Mode),
    port_range: Type.Optional(Type.Tuple([TcpPort, TcpPort])),
    setup_timeout_s: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86400 })),
    git_timeout_s: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 86400, description: "how long review and landing git (changes, diff, conflicts, rebase, merge, push) may take (default 120); a commit, which runs the repository's hooks, has setup_timeout_s" }),
    ),
    timeout_s: Type.Optional(TimeoutS),
    auto_resume: Type.Optional(Type.Boolean({ description: 'continue a conversation when its usage limit resets (default true)' })),
    resume_prompt: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000]*$' })),
    hooks: Type.Optional(Type.Array(Hook, { maxItems: 100 })),
    allow: Type.Optional(AllowRules),
    approval_timeout_s: Type.Optional(ApprovalTimeoutS),
    sandbox: Type.Optional(SandboxSetting),
    accept_remote: Type.Optional(
      Type.Boolean({ description: 'run requests other hosts of the store forward to this one (default true); false refuses them with 403 REMOTE_REFUSED (DESIGN §14.2)' }),
    ),
    github: Type.Optional(
      Type.Object(
        {
          api_url: Type.Optional(
            Type.String({ maxLength: 2048, pattern: '^https?://[^\\u0000-\\u0020]+$', description: "GitHub's REST API (default https://api.github.com; GitHub Enterprise: https://HOST/api/v3)" }),
          ),
          token_command: Type.Optional(
            Type.Array(Arg, { minItems: 1, description: 'prints the token on stdout when GH_TOKEN and GITHUB_TOKEN are unset (default ["gh", "auth", "token"] when gh is installed)' }),
          ),
          timeout_s: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 600, description: 'how long one request to GitHub may take before it is tried again (default 30)' })),
          pr_poll_s: Type.Optional(Type.Number({ minimum: 1, maximum: 86400, description: 'how often each pull request grove opened is read for reviews, comments and checks, in seconds (default 60)' })),
        },
        { additionalProperties: false, description: 'issue intake and pull requests (DESIGN §20)' },
      ),
    ),
    database_url: Type.Optional(
      Type.String({
        pattern: '^postgres(ql)?://[^\\u0000]*$',
        maxLength: 4096,
        description: 'a PostgreSQL (14 or newer) to keep every table in instead of the embedded store (DESIGN §14.2); GROVE_DATABASE_URL wins',
      }),
    ),
  },
  { additionalProperties: false, $id: 'UserConfig' },
);
export type UserConfig = Static<typeof UserConfig>;
