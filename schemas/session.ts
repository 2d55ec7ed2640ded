import { Type, type Static } from '@sinclair/typebox';
import { Id, MAX_ARG_BYTES, Timestamp, UUID_PATTERN } from './common.ts';
import { ApprovalTimeoutS, Mode, SandboxSetting, TimeoutS } from './config.ts';
import { OutputLine } from './output.ts';
import { OUTPUT_PAGE_MAX } from './pages.ts';
import { SESSION_STATUSES } from './session-status.ts';

export { OUTPUT_PAGE_MAX } from './pages.ts';
export { BUSY_STATUSES, isBusy, isLive, LIVE_STATUSES, SESSION_STATUSES, type BusyStatus, type LiveStatus } from './session-status.ts';

export const SessionStatus = Type.Union(SESSION_STATUSES.map((s) => Type.Literal(s)));
export type SessionStatus = Static<typeof SessionStatus>;

// A tool call the agent refused by itself, without asking (DESIGN §15, "No silent denials"):
// the tool's name and its whole input, as the agent reported them.
export const Denial = Type.Object({
  tool: Type.String({ description: "the tool's name, e.g. Bash" }),
  input: Type.Record(Type.String(), Type.Unknown(), { description: "the tool's whole input, e.g. {command}" }),
});
export type Denial = Static<typeof Denial>;

// What an agent reported at its end (DESIGN §8); a field it does not report is null.
const agentResult = {
  text: Type.Union([Type.String(), Type.Null()]),
  is_error: Type.Union([Type.Boolean(), Type.Null()]),
  cost_usd: Type.Union([Type.Number(), Type.Null()]),
  input_tokens: Type.Union([Type.Integer(), Type.Null()]),
  output_tokens: Type.Union([Type.Integer(), Type.Null()]),
  denials: Type.Array(Denial, { description: 'the calls the agent denied by itself (none: empty); a turn with any is not a plain success' }),
};
export const AgentResult = Type.Object(agentResult);
export type AgentResult = Static<typeof AgentResult>;

// What the sandbox refused a confined session (DESIGN §18), counted per target.
export const Blocked = Type.Object({
  kind: Type.Union([Type.Literal('network'), Type.Literal('write')]),
  target: Type.String({ description: 'host:port, or a path' }),
  count: Type.Integer({ minimum: 1, description: 'how many times' }),
});
export type Blocked = Static<typeof Blocked>;

// The agent's report with what the sandbox refused it; a session with neither has none (null).
export const SessionResult = Type.Object(
  { ...agentResult, blocked: Type.Array(Blocked, { description: 'what the sandbox refused the agent (DESIGN §18), each target once with its count; none: empty' }) },
  { $id: 'SessionResult' },
);
export type SessionResult = Static<typeof SessionResult>;

// A turn (DESIGN §17): the worktree's whole state recorded when an agent session ended, as the
// commit under refs/grove/turns/<task id>/<n>.
export const TurnRef = Type.Object(
  {
    n: Type.Integer({ minimum: 1, description: "the turn's number, counted per task from 1" }),
    commit: Type.String({ pattern: '^[0-9a-f]{40,64}$', description: 'the commit holding the state' }),
  },
  { $id: 'TurnRef' },
);
export type TurnRef = Static<typeof TurnRef>;

// Whether a session runs confined (DESIGN §18), and why not when it does not.
export const SessionSandbox = Type.Object(
  {
    confined: Type.Boolean({ description: 'the agent runs in the sandbox' }),
    reason: Type.Optional(Type.String({ description: 'why it is not confined' })),
  },
  { $id: 'SessionSandbox' },
);
export type SessionSandbox = Static<typeof SessionSandbox>;

// How a session runs (DESIGN §21): headless (its output read as the agent's structured stream), or
// under a pseudo-terminal held by a process of its own, attached over a WebSocket.
export const Interface = Type.Union([Type.Literal('headless'), Type.Literal('terminal')], {
  description: 'headless (the default), or terminal: the agent\'s interactive program under a pseudo-terminal (GET /api/sessions/:id/terminal)',
});
export type Interface = Static<typeof Interface>;

export const Session = Type.Object(
  {
    id: Id,
    task_id: Id,
    host_id: Type.String({ pattern: UUID_PATTERN, description: "the host whose processes run it: its task's" }),
    kind: Type.Union([Type.Literal('agent'), Type.Literal('service'), Type.Literal('interactive'), Type.Literal('terminal')], {
      description:
        "an agent, one of the project's services (DESIGN §10), an agent taken over in the person's terminal (grove takeover, DESIGN §15: no output is captured), or a shell in the task's worktree (DESIGN §21)",
    }),
    agent: Type.Union([Type.String(), Type.Null()], { description: "the agent's name, or the service's; null for a task's shell (kind terminal)" }),
    interface: Interface,
    command: Type.Array(Type.String(), { description: 'the command line the agent was started with' }),
    status: SessionStatus,
    pid: Type.Union([Type.Integer(), Type.Null()]),
    created_at: Timestamp,
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    ended_at: Type.Union([Timestamp, Type.Null()]),
    mode: Mode,
    prompt: Type.Union([Type.String(), Type.Null()], { description: 'the prompt the session was started with' }),
    conversation_id: Type.String({ pattern: UUID_PATTERN, description: 'the id of the first session of its conversation (its own id when it started one)' }),
    parent_id: Type.Union([Id, Type.Null()], { description: 'the session this one continues, or null' }),
    agent_session_id: Type.Union([Type.String(), Type.Null()], { description: "the agent's own session or thread id, pinned at start or read from its output" }),
    result: Type.Union([SessionResult, Type.Null()], { description: 'what the agent reported at its end, or null' }),
    limit_resets_at: Type.Union([Timestamp, Type.Null()], { description: "when the agent's usage limit resets, where its output said it was reached" }),
    not_before: Type.Union([Timestamp, Type.Null()], { description: 'a queued session starts no earlier than this' }),
    timeout_s: Type.Union([TimeoutS, Type.Null()]),
    timed_out: Type.Boolean({ description: 'killed because it ran longer than timeout_s' }),
    waiting: Type.Union([Type.Literal('approval'), Type.Null()], { description: 'approval: one of its approvals waits for the person (DESIGN §15)' }),
    turn: Type.Union([TurnRef, Type.Null()], { description: "the turn recorded at its end (DESIGN §17): an agent session's whose worktree was there; else null" }),
    after: Type.Union([Type.Array(Id), Type.Null()], {
      description: 'a first session made with its task (DESIGN §17): the tasks it waits for to merge while queued ([]: its task\'s setup only); else null',
    }),
    sandbox: SessionSandbox,
  },
  { $id: 'Session' },
);
export type Session = Static<typeof Session>;

// What a session's output has said about itself so far (DESIGN §8): read from its lines by the
// agent's dialect (daemon/agents/dialects.ts), stored with them (daemon/store/sessions.ts).
export type SessionReading = Pick<Session, 'agent_session_id' | 'limit_resets_at'> & { result: AgentResult | null };

export const SessionList = Type.Array(Session);
export type SessionList = Static<typeof SessionList>;

// The largest output line seq (a 32-bit integer in the store).
export const MAX_SEQ = 2147483647;

// A longer prompt could only make a session that fails to start (E2BIG). The route checks the
// UTF-8 size; the character limit here is the same number. A blank prompt asks the agent nothing:
// it is refused, not sent (a session without a prompt leaves the field out).
export const Prompt = Type.String({ maxLength: MAX_ARG_BYTES, pattern: '^\\s*[^\\u0000\\s][^\\u0000]*$', description: 'at most 128 KiB of UTF-8, not blank' });
export const Args = Type.Array(Type.String({ maxLength: 65536, pattern: '^[^\\u0000]*$' }), { maxItems: 256 });

export const CreateSession = Type.Object(
  {
    agent: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' })),
    prompt: Type.Optional(Prompt),
    args: Type.Optional(Args),
    mode: Type.Optional(Mode),
    timeout_s: Type.Optional(TimeoutS),
    approval_timeout_s: Type.Optional(ApprovalTimeoutS),
    sandbox: Type.Optional(SandboxSetting),
    interface: Type.Optional(Interface),
  },
  { additionalProperties: false, $id: 'CreateSession' },
);
export type CreateSession = Static<typeof CreateSession>;

// A follow-up in a session's conversation (DESIGN §8): its agent is the conversation's.
export const CreateMessage = Type.Object(
  {
    prompt: Prompt,
    args: Type.Optional(Args),
    mode: Type.Optional(Mode),
    timeout_s: Type.Optional(TimeoutS),
    approval_timeout_s: Type.Optional(ApprovalTimeoutS),
    at: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "a scheduled follow-up (DESIGN §19): queued until this ISO 8601 time (with its offset), kept across restarts; the conversation's later follow-ups wait behind it",
      }),
    ),
    interface: Type.Optional(
      Type.Union([Type.Literal('headless'), Type.Literal('terminal')], {
        description: "how the follow-up runs; default the conversation's last session's. To a running terminal session a follow-up is typed into it instead",
      }),
    ),
  },
  { additionalProperties: false, $id: 'CreateMessage' },
);
export type CreateMessage = Static<typeof CreateMessage>;

export const SessionListQuery = Type.Object({ conversation_id: Type.Optional(Id) }, { additionalProperties: false });
export type SessionListQuery = Static<typeof SessionListQuery>;

export const AllSessionsQuery = Type.Object({ project_id: Type.Optional(Id) }, { additionalProperties: false });
export type AllSessionsQuery = Static<typeof AllSessionsQuery>;

export const KillResult = Type.Object({ status: Type.Literal('killed') }, { $id: 'KillResult' });
export type KillResult = Static<typeof KillResult>;

// How many lines an output page has when the query does not say (the most: OUTPUT_PAGE_MAX).
export const OUTPUT_PAGE_DEFAULT = 1000;

export const OutputQuery = Type.Object(
  {
    // seq is a 32-bit integer column: a larger `after` would fail in the store, not match nothing.
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQ })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: OUTPUT_PAGE_MAX })),
    last: Type.Optional(Type.Integer({ minimum: 1, maximum: OUTPUT_PAGE_MAX, description: 'the last `last` lines instead of a page after `after` (not with `after` or `limit`)' })),
  },
  { additionalProperties: false },
);
export type OutputQuery = Static<typeof OutputQuery>;

export const OutputPage = Type.Object(
  {
    lines: Type.Array(OutputLine),
    next: Type.Integer({ description: 'the `after` for the next page: the last seq returned, or `after` when none' }),
  },
  { $id: 'OutputPage' },
);
export type OutputPage = Static<typeof OutputPage>;

// A terminal session's conversation (DESIGN §21): the transcript its agent wrote, each of its
// JSON lines as an output line (seq from 1, at its own timestamp), for the dashboard's view.
export const TranscriptView = Type.Object(
  {
    kind: Type.Union([Type.Literal('claude'), Type.Literal('codex'), Type.Null()], { description: "whose transcript: Claude Code's session JSONL, Codex's rollout; null: the agent writes none grove reads" }),
    lines: Type.Array(OutputLine),
    truncated: Type.Boolean({ description: 'the transcript is longer than a view shows (its first 32 MiB)' }),
  },
  { $id: 'TranscriptView' },
);
export type TranscriptView = Static<typeof TranscriptView>;

export const Agent = Type.Object(
  {
    name: Type.String(),
    command: Type.Array(Type.String()),
    resume: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'the command that continues a conversation, or null: the agent cannot' }),
    interactive: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "the command that resumes a conversation in the person's terminal (grove takeover), or null: the agent has none" }),
    terminal: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'the command a terminal session (interface "terminal") starts a conversation with, or null: the agent has none' }),
    available: Type.Boolean(),
    builtin: Type.Boolean(),
    approvals: Type.Boolean({ description: "whether grove asks the person about the calls this agent's mode would refuse (DESIGN §15)" }),
  },
  { $id: 'Agent' },
);
export type Agent = Static<typeof Agent>;
export const AgentList = Type.Array(Agent);
export type AgentList = Static<typeof AgentList>;

// A service of the task's `.grove.json` and its latest session (DESIGN §10).
export const Service = Type.Object(
  {
    name: Type.String(),
    command: Type.String(),
    autostart: Type.Boolean(),
    session: Type.Union([Session, Type.Null()], { description: 'the latest session of that service, or null' }),
  },
  { $id: 'Service' },
);
export type Service = Static<typeof Service>;
export const ServiceList = Type.Array(Service);
export type ServiceList = Static<typeof ServiceList>;

// Any name: one that the project's .grove.json does not have is 404, whatever its shape.
export const ServiceParams = Type.Object({ id: Id, name: Type.String({ minLength: 1 }) }, { additionalProperties: false });

// Take-over (DESIGN §15): the client that runs the agent's interactive resume in the person's
// terminal names its own process, which grove watches as a session's process.
export const TakeoverBody = Type.Object(
  {
    pid: Type.Integer({ minimum: 1, maximum: 2 ** 31 - 1, description: "the id of the client's own process (grove takeover): while it runs, the session runs" }),
    args: Type.Optional(Args),
  },
  { additionalProperties: false, $id: 'TakeoverBody' },
);
export type TakeoverBody = Static<typeof TakeoverBody>;

// What the client runs, in the person's terminal: the command, where, and the task's own
// variables, which go over the client's environment.
export const Takeover = Type.Object(
  {
    session: Session,
    command: Type.Array(Type.String(), { description: "the agent's interactive resume of the conversation's agent session id" }),
    cwd: Type.String({ description: "the task's worktree, absolute" }),
    env: Type.Record(Type.String(), Type.String(), { description: "the task's variables (GROVE_*, ports, the project's env) and the agent's, set over the client's own environment" }),
  },
  { $id: 'Takeover' },
);
export type Takeover = Static<typeof Takeover>;

// How the interactive command ended, as its client saw it: the exit code (a signal's death as
// 128 + its number, as a shell says it).
export const EndBody = Type.Object(
  { exit_code: Type.Integer({ minimum: 0, maximum: 255 }) },
  { additionalProperties: false, $id: 'EndBody' },
);
export type EndBody = Static<typeof EndBody>;
