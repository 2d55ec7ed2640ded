// The MCP tools of `grove mcp` (DESIGN §13) as a table of data: each names its input schema, made
// from the daemon's own schemas, whether it only reads or removes something, and the API calls it
// makes through the client (daemon/client).
import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import { ApprovalDecision } from '../../schemas/approval.ts';
import { CreateAutomation } from '../../schemas/automation.ts';
import { UUID_PATTERN } from '../../schemas/common.ts';
import type { GroveEvent } from '../../schemas/event.ts';
import { QueueBody } from '../../schemas/queue.ts';
import { ChangesQuery, CommitBody, MergeBody, RestoreBody } from '../../schemas/review.ts';
import { CreateMessage, CreateSession, MAX_SEQ, OUTPUT_PAGE_MAX, type Session } from '../../schemas/session.ts';
import { CreateTask } from '../../schemas/task.ts';
import { denialSummary } from '../../schemas/denials.ts';
import type { Client } from '../client/calls.ts';
import type { Body } from '../client/transport.ts';

export interface Tool {
  name: string;
  description: string;
  input: TObject;
  /** reads only: the tools `grove mcp --read-only` offers */
  readOnly: boolean;
  /** removes or lands something (MCP's destructive hint) */
  destructive: boolean;
  run(api: Client, args: any): Promise<unknown>;
}

// An input object of these properties and no others; `description`s travel to the agent.
const input = (props: TProperties) => Type.Object(props, { additionalProperties: false });
const { project_id: _p, wait: _w, ...taskFields } = CreateTask.properties;
const id = (description: string) => Type.String({ pattern: UUID_PATTERN, description });
const TaskId = id('the task id (a lowercase UUID) from create_task or list_tasks');
const SessionId = id('the session id from start_session or send_message');
const ProjectId = id('the project id from list_projects');

// How long wait_for_session waits when not told: an agent's turn is often minutes.
const WAIT_S = 600;
// How many of the last lines get_output reads when not told.
const LAST_LINES = 200;

// A session as an agent reads it: whether it ended and how, with the calls its agent denied by
// itself said in words, so a turn with denials never reads as a plain success, and the approvals
// it waits on (DESIGN §15).
async function sessionState(api: Client, session: Session) {
  const denied = denialSummary(session.result?.denials);
  const approvals = session.ended_at !== null ? [] : await api.approvals({ status: 'pending', session_id: session.id });
  return {
    ended: session.ended_at !== null,
    // `interactive`: the person took the conversation over in a terminal (grove takeover); it
    // has no output, and a follow-up continues after it.
    kind: session.kind,
    status: session.status,
    exit_code: session.exit_code,
    // DESIGN §18: an agent that ran with the user's full rights says so.
    ...(session.sandbox.confined ? { confined: true } : { confined: false, unconfined: `not confined: ${session.sandbox.reason ?? 'no reason given'}; it runs with the user's full rights` }),
    ...(denied ? { denied: `${denied} (the agent refused them by itself; the work they were for was not done)` } : {}),
    result: session.result,
    limit_resets_at: session.limit_resets_at,
    waiting: approvals.length > 0 ? ('approval' as const) : null,
    approvals,
    session,
  };
}

// The session's end, a pending approval of it (DESIGN §15), or after `timeout_s` its state then.
// Its end: the output stream, asked to start after the last possible line, says nothing until its
// `end` event. An approval: one already pending, or `approval.requested` on the task's events
// after the newest seq read before looking.
async function waitForSession(api: Client, args: { session_id: string; timeout_s?: number }) {
  const ms = (args.timeout_s ?? WAIT_S) * 1000;
  const bodies: Body[] = [];
  let over = false;
  const open = <T extends { body: Body }>(followed: T): T => {
    bodies.push(followed.body);
    if (over) followed.body.destroy();
    return followed;
  };
  const pendingOf = () => api.approvals({ status: 'pending', session_id: args.session_id });
  const [{ last_event_seq }, start] = await Promise.all([api.health(), api.session(args.session_id)]);
  const ended = (async () => {
    const { events } = open(await api.followOutput(args.session_id, { 'last-event-id': String(MAX_SEQ) }));
    for await (const { event, data } of events) if (event === 'end') return data as Session;
    return null;
  })();
  const asked = (async () => {
    if ((await pendingOf()).length > 0) return null;
    const { events } = open(await api.events(last_event_seq, { task_id: start.task_id }));
    for await (const { event, data } of events) {
      const e = data as GroveEvent;
      if (event === 'approval.requested' && e.session_id === args.session_id) return null;
    }
    return new Promise<null>(() => {}); // the stream ended: the other waits decide
  })().catch(() => new Promise<null>(() => {})); // a stream let go of, or lost: the other waits decide
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    const session = (await Promise.race([ended, asked, late])) ?? (await api.session(args.session_id));
    return await sessionState(api, session);
  } finally {
    clearTimeout(timer);
    // A wait that ended lets go of its streams: the client's few connections are not held.
    over = true;
    for (const b of bodies) b.destroy();
  }
}

// The last `last` lines, or the page after seq `after`, as text an agent reads (stderr marked).
async function getOutput(api: Client, args: { session_id: string; last?: number; after?: number }) {
  const want = args.last ?? LAST_LINES;
  const { lines, next } =
    args.after !== undefined
      ? await api.outputPage(args.session_id, args.after, want)
      : await api.outputTail(args.session_id, want);
  const text = lines.map((l) => (l.stream === 'stderr' ? `[stderr] ${l.text}` : l.text)).join('\n');
  return { lines: lines.length, first_seq: lines[0]?.seq ?? null, next, text };
}

export const TOOLS: Tool[] = [
  {
    name: 'list_projects',
    description: 'List the git repositories grove manages (id, name, path). Start here to find the project_id other tools need.',
    input: input({}),
    readOnly: true,
    destructive: false,
    run: (api) => api.projects(),
  },
  {
    name: 'list_tasks',
    description: "List tasks (each a branch with its own worktree): all, or one project's. Status is setting_up, ready, setup_failed or archived.",
    input: input({ project_id: Type.Optional(ProjectId) }),
    readOnly: true,
    destructive: false,
    run: (api, a) => api.tasks(a.project_id ? { project_id: a.project_id } : {}),
  },
  {
    name: 'create_task',
    description:
      "Create a task for one piece of work: a new branch and git worktree of the project, prepared by the project's setup commands. Answers once setup has run: status ready (start sessions on it) or setup_failed.",
    input: input({ project_id: ProjectId, ...taskFields }),
    readOnly: false,
    destructive: false,
    run: (api, a) => api.createTask({ ...a, wait: true }),
  },
  {
    name: 'start_session',
    description:
      "Start a coding agent on a ready task, in its worktree, with a prompt. agent: a name from the project's config or a built-in (claude, codex, gemini, opencode…), the project's default if left out; mode: read, edit (default) or full. Answers at once with the session; use wait_for_session to wait for it.",
    input: input({ task_id: TaskId, ...CreateSession.properties }),
    readOnly: false,
    destructive: false,
    run: (api, { task_id, ...body }) => api.startSession(task_id, body),
  },
  {
    name: 'send_message',
    description: "Continue a session's conversation with a follow-up prompt (the same agent resumes it). Queued until the session's current turn ends. Answers the new session.",
    input: input({ session_id: SessionId, ...CreateMessage.properties }),
    readOnly: false,
    destructive: false,
    run: (api, { session_id, ...body }) => api.say(session_id, body),
  },
  {
    name: 'schedule_followup',
    description:
      "Continue a session's conversation later (DESIGN §19): the follow-up prompt is queued until `at` (an ISO 8601 time with its offset, e.g. 2026-12-01T09:00:00Z), kept across daemon restarts, then the same agent resumes the conversation. Follow-ups sent meanwhile wait behind it. Answers the queued session.",
    input: input({ session_id: SessionId, at: Type.String({ minLength: 1, maxLength: 100, description: 'when: an ISO 8601 time with its offset' }), prompt: CreateMessage.properties.prompt }),
    readOnly: false,
    destructive: false,
    run: (api, { session_id, at, prompt }) => api.say(session_id, { prompt, at }),
  },
  {
    name: 'wait_for_session',
    description: `Wait until a session ends, one of its approvals waits for a decision, or timeout_s (default ${WAIT_S}) passes. Answers ended (true or false), kind (agent; interactive: the person took the conversation over in a terminal, nothing of it is captured; service), status, exit_code, result (the agent's final message, cost and tokens, when it reported one), denied (the tool calls the agent refused by itself, when there were any), limit_resets_at when it hit a usage limit, and waiting ("approval" or null) with the pending approvals (answer them with respond_to_approval).`,
    input: input({ session_id: SessionId, timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: `seconds to wait at most (default ${WAIT_S})` })) }),
    readOnly: true,
    destructive: false,
    run: waitForSession,
  },
  {
    name: 'get_session',
    description: 'A session as it is now, without waiting: the same answer as wait_for_session (ended, status, exit_code, result, denied, limit_resets_at, waiting and the pending approvals).',
    input: input({ session_id: SessionId }),
    readOnly: true,
    destructive: false,
    run: async (api, a) => sessionState(api, await api.session(a.session_id)),
  },
  {
    name: 'get_output',
    description: `Read what a session printed: its last \`last\` lines (default ${LAST_LINES}), or the lines after seq \`after\`. Answers the text (stderr lines marked [stderr]) and \`next\`, the seq to pass as \`after\` to read on.`,
    input: input({
      session_id: SessionId,
      last: Type.Optional(Type.Integer({ minimum: 1, maximum: OUTPUT_PAGE_MAX, description: `how many lines (default ${LAST_LINES})` })),
      after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'read the lines after this seq instead of the last ones' })),
    }),
    readOnly: true,
    destructive: false,
    run: getOutput,
  },
  {
    name: 'get_changes',
    description:
      "What a task changed since it branched from its base: files added, modified, deleted, renamed or untracked, committed or not, with line counts; commits ahead and behind. With from/to (base, work or turn:N from list_turns): the files changed between those two states.",
    input: input({ task_id: TaskId, ...ChangesQuery.properties }),
    readOnly: true,
    destructive: false,
    run: (api, { task_id, ...range }) => api.changes(task_id, range),
  },
  {
    name: 'get_diff',
    description:
      "The unified diff of a task's changes against its merge-base (uncommitted and untracked included), or of one file with `path`; with from/to (base, work or turn:N from list_turns), between those two states.",
    input: input({ task_id: TaskId, path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "one file's path in the worktree" })), ...ChangesQuery.properties }),
    readOnly: true,
    destructive: false,
    run: async (api, { task_id, path, ...range }) => {
      let text = '';
      for await (const chunk of await api.diff(task_id, path, range)) text += chunk.toString('utf8');
      return text;
    },
  },
  {
    name: 'list_turns',
    description:
      "A task's turns, oldest first: the worktree's whole state (committed, uncommitted, untracked) saved when each agent session ended (session_id), or before a restore (restored: the turn it restored). n is what get_changes and get_diff take as turn:N and restore_turn takes; files: how many files differ from the turn before.",
    input: input({ task_id: TaskId }),
    readOnly: true,
    destructive: false,
    run: (api, a) => api.turns(a.task_id),
  },
  {
    name: 'restore_turn',
    description:
      "Make a task's files and index those of turn `turn` (from list_turns). The state before is first saved as a new turn (answered as `saved`: restore it to undo); the branch never moves. Refused with SESSION_RUNNING while an agent of the task runs.",
    input: input({ task_id: TaskId, ...RestoreBody.properties }),
    readOnly: false,
    // Undoable: what it replaces is saved as a turn first.
    destructive: false,
    run: (api, a) => api.restore(a.task_id, a.turn),
  },
  {
    name: 'commit_task',
    description: "Commit everything uncommitted in a task's worktree (untracked files included, ignored ones not) with a message.",
    input: input({ task_id: TaskId, ...CommitBody.properties }),
    readOnly: false,
    destructive: false,
    run: (api, { task_id, ...body }) => api.commit(task_id, body.message),
  },
  {
    name: 'merge_task',
    description: "Land a task: merge its branch into its base branch (strategy merge, squash or ff). Refused with a CONFLICT naming the files, or when the work is not committed. Changes the base branch.",
    input: input({ task_id: TaskId, ...MergeBody.properties }),
    readOnly: false,
    destructive: true,
    run: (api, { task_id, ...body }) => api.merge(task_id, body),
  },
  {
    name: 'queue_task',
    description:
      "Queue a task to land on its base branch through the project's merge queue: one at a time, each rebased onto the base's tip, checked with the project's check commands, then merged (strategy merge, squash or ff). Answers its place at once; a conflict or failed check takes it out (see list_queue and the queue.failed event), and with fix: true its latest conversation is told what failed and it is queued again when that turn ends. Refused with ALREADY_QUEUED.",
    input: input({ task_id: TaskId, ...(({ task_id: _t, ...rest }) => rest)(QueueBody.properties) }),
    readOnly: false,
    destructive: true,
    run: async (api, a) => api.enqueue((await api.task(a.task_id)).project_id, a),
  },
  {
    name: 'list_queue',
    description: "A project's merge queue in order, per base branch: each task's position, state (waiting, landing, fixing), tries, and why its last landing failed (the reason, the files in conflict or the check's last lines).",
    input: input({ project_id: ProjectId }),
    readOnly: true,
    destructive: false,
    run: (api, a) => api.queue(a.project_id),
  },
  {
    name: 'list_automations',
    description:
      "The automations (agent work started on a schedule), all or one project's: each with its schedule (a cron with its zone, or one time `at`), session (prompt, agent, mode), enabled, next_run_at (null when paused or its time has passed) and last_run (status pending, precheck, running, succeeded, failed or skipped, with reason or error, task_id and session_id).",
    input: input({ project_id: Type.Optional(ProjectId) }),
    readOnly: true,
    destructive: false,
    run: (api, a) => api.automations(a.project_id ? { project_id: a.project_id } : {}),
  },
  {
    name: 'create_automation',
    description:
      'Make an automation: each scheduled time (schedule {cron, timezone?}: 5 fields, or 6 with seconds first, in an IANA zone, default the machine\'s; or {at}: one ISO time with its offset) creates a task and starts a session with the prompt, whose {date}, {run_id} and {precheck_output} are filled in. precheck: a shell command run first in the project\'s checkout, whose non-zero exit skips the run. land: none (the task waits for review) or queue (the merge queue, fixed on failure). Refused with SCHEDULE_INVALID (the field and why), UNKNOWN_AGENT, MODE_UNSUPPORTED, AUTOMATION_EXISTS (a project has one of each name).',
    input: input({ ...CreateAutomation.properties, project_id: ProjectId }),
    readOnly: false,
    destructive: false,
    run: (api, a) => api.createAutomation(a),
  },
  {
    name: 'run_automation',
    description:
      'Run an automation now, paused or not: answers the run at once (status pending; skipped with reason overlap when one is going and its overlap is skip). Its task_id and session_id are filled in as it runs (see list_automations\' last_run); wait for its session with wait_for_session.',
    input: input({ automation_id: id('the automation id from list_automations or create_automation') }),
    readOnly: false,
    destructive: false,
    run: (api, a) => api.runAutomation(a.automation_id),
  },
  {
    name: 'archive_task',
    description: "Archive a task: stop its sessions and services, run its teardown, remove its worktree (the branch stays). Refused with WORKTREE_DIRTY when work is uncommitted, unless force is true (which discards it).",
    input: input({ task_id: TaskId, force: Type.Optional(Type.Boolean({ description: 'discard uncommitted work' })) }),
    readOnly: false,
    destructive: true,
    run: (api, a) => api.removeTask(a.task_id, a.force === true),
  },
  {
    name: 'kill_session',
    description: "Stop a session: its agent's whole process group is killed (or a queued turn cancelled).",
    input: input({ session_id: SessionId }),
    readOnly: false,
    destructive: true,
    run: (api, a) => api.kill(a.session_id),
  },
  {
    name: 'list_approvals',
    description:
      "What agents ask the person (DESIGN §15): approvals with the tool and its whole input (the command, the file and its diff, the URL), a question, or a connection a confined session's sandbox holds (kind network, input {host, port}). status: pending (default), allowed, denied, expired; filter by task or session.",
    input: input({
      status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('allowed'), Type.Literal('denied'), Type.Literal('expired')], { description: 'default pending' })),
      task_id: Type.Optional(TaskId),
      session_id: Type.Optional(SessionId),
    }),
    readOnly: true,
    destructive: false,
    run: (api, a) => {
      return api.approvals({ status: a.status ?? 'pending', ...(a.task_id ? { task_id: a.task_id } : {}), ...(a.session_id ? { session_id: a.session_id } : {}) });
    },
  },
  {
    name: 'respond_to_approval',
    description:
      'Decide a pending approval, once: decision allow or deny (message: why, told to the agent); remember: session or project keeps an allow as a rule (for a connection: that host and port); a question is allowed with its answer. The nonce is read for you.',
    input: input({ approval_id: id('the approval id from list_approvals or wait_for_session'), ...(({ nonce: _n, ...rest }) => rest)(ApprovalDecision.properties) }),
    readOnly: false,
    destructive: false,
    run: async (api, { approval_id, ...body }) => {
      const a = await api.approval(approval_id);
      return api.decide(approval_id, { ...body, nonce: a.nonce });
    },
  },
  {
    name: 'conflicts',
    description: "Which of a project's live tasks would conflict with each other or with their base if merged (uncommitted work included), and in which files. Nothing is checked out or changed.",
    input: input({ project_id: ProjectId }),
    readOnly: true,
    destructive: false,
    run: (api, a) => api.conflicts(a.project_id),
  },
];
