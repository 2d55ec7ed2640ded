import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.ts';

// The person in the loop (DESIGN §15): what an agent asked, and what became of it.
export const APPROVAL_STATUSES = ['pending', 'allowed', 'denied', 'expired'] as const;
export const ApprovalStatus = Type.Union(APPROVAL_STATUSES.map((s) => Type.Literal(s)));
export type ApprovalStatus = Static<typeof ApprovalStatus>;

// `network`: a connection the sandbox holds (DESIGN §18), asked by the session's network proxy.
export const ApprovalKind = Type.Union([Type.Literal('tool'), Type.Literal('question'), Type.Literal('network')]);
export type ApprovalKind = Static<typeof ApprovalKind>;

// A host name (labels of letters, digits and inner hyphens, dot-separated), an IPv4 address, or an
// IPv6 address without brackets (hex digits and colons, an IPv4 tail allowed).
const HOST_PATTERN = '^(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?|(?=[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*:)[0-9A-Fa-f:.]+)$';

// The input of a `network` approval: where the connection goes.
export const NetworkTarget = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253, pattern: HOST_PATTERN, description: 'a host name, an IPv4 address or an IPv6 address (no brackets)' }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
  },
  { additionalProperties: false },
);
export type NetworkTarget = Static<typeof NetworkTarget>;

// Tool names as Claude Code names them (`Bash`, `Edit`, `mcp__server__tool`); bridges of other
// agents map theirs to these.
const ToolName = Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9_.:-]+$' });

// What a bridge tells its agent: `allow`, `deny` with the person's message, or `expired` with
// "no decision within N s" (never worded as a refusal by the person); null while pending.
export const ApprovalVerdict = Type.Union(
  [
    Type.Object({ behavior: Type.Literal('allow'), answer: Type.Union([Type.String(), Type.Null()]) }),
    Type.Object({ behavior: Type.Literal('deny'), message: Type.String() }),
    Type.Object({ behavior: Type.Literal('expired'), message: Type.String() }),
  ],
  { $id: 'ApprovalVerdict' },
);
export type ApprovalVerdict = Static<typeof ApprovalVerdict>;

export const Approval = Type.Object(
  {
    id: Id,
    session_id: Id,
    task_id: Id,
    key: Type.String({ description: "the agent's own id of the call (its tool-use id), as the bridge sent it" }),
    kind: ApprovalKind,
    tool: Type.String({ description: "the tool's name as Claude Code names it; `AskUserQuestion` for a question" }),
    input: Type.Unknown({ description: "the tool's whole input: the command, the file and its new text, the URL; a question's text" }),
    status: ApprovalStatus,
    reason: Type.Union([Type.String(), Type.Null()], {
      description: 'why it ended so: the rule that allowed it, the message of a denial, "no decision within N s", or the ended session',
    }),
    answer: Type.Union([Type.String(), Type.Null()], { description: "the person's answer to a question" }),
    remember: Type.Union([Type.Literal('session'), Type.Literal('project'), Type.Null()], { description: 'the rule scope the decision added' }),
    nonce: Type.String({ description: 'what a decision must send back: it proves the answer is to this approval as it was shown' }),
    expires_at: Type.Union([Timestamp, Type.Null()], { description: 'when a pending approval expires (approval_timeout_s), or null: it waits' }),
    created_at: Timestamp,
    decided_at: Type.Union([Timestamp, Type.Null()]),
    verdict: Type.Union([ApprovalVerdict, Type.Null()], { description: "what the agent's bridge tells the agent; null while pending" }),
  },
  { $id: 'Approval' },
);
export type Approval = Static<typeof Approval>;

export const ApprovalList = Type.Array(Approval);
export type ApprovalList = Static<typeof ApprovalList>;

export const ApprovalListQuery = Type.Object(
  { status: Type.Optional(ApprovalStatus), task_id: Type.Optional(Id), session_id: Type.Optional(Id) },
  { additionalProperties: false },
);
export type ApprovalListQuery = Static<typeof ApprovalListQuery>;

const Text = Type.String({ maxLength: 65536, pattern: '^[^\\u0000]*$' });

export const RememberScope = Type.Union([Type.Literal('session'), Type.Literal('project')]);
export type RememberScope = Static<typeof RememberScope>;

// The person's decision (DESIGN §15).
export const ApprovalDecision = Type.Object(
  {
    nonce: Type.String({ minLength: 1, maxLength: 128 }),
    decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
    remember: Type.Optional(RememberScope),
    message: Type.Optional(Text),
    answer: Type.Optional(Text),
  },
  { additionalProperties: false, $id: 'ApprovalDecision' },
);
export type ApprovalDecision = Static<typeof ApprovalDecision>;

// What an agent's bridge asks (a grove addition): `key` is the agent's own id of the call (its
// tool-use id), so asking again after a lost answer or a daemon restart finds the same approval.
export const ApprovalAsk = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\u0000]*$' }),
    kind: Type.Optional(ApprovalKind),
    tool: ToolName,
    input: Type.Unknown(),
  },
  { additionalProperties: false, $id: 'ApprovalAsk' },
);
export type ApprovalAsk = Static<typeof ApprovalAsk>;

// How long one wait for a decision may hold a request, in seconds.
export const MAX_WAIT_S = 60;
export const ApprovalWaitQuery = Type.Object(
  { wait: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_WAIT_S, description: 'hold the answer up to this many seconds while the approval is pending' })) },
  { additionalProperties: false },
);
export type ApprovalWaitQuery = Static<typeof ApprovalWaitQuery>;

