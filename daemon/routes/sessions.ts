import { IdParams, MAX_ARG_BYTES } from '../../schemas/common.ts';
import {
  AgentList,
  AllSessionsQuery,
  CreateMessage,
  CreateSession,
  EndBody,
  KillResult,
  MAX_SEQ,
  OUTPUT_PAGE_DEFAULT,
  OutputPage,
  OutputQuery,
  ServiceList,
  ServiceParams,
  Session,
  SessionList,
  SessionListQuery,
  Takeover,
  TakeoverBody,
  TranscriptView,
} from '../../schemas/session.ts';
import type { Agents } from '../agents/agents.ts';
import { GroveError } from '../errors.ts';
import { route, type Route } from '../http/route.ts';
import { resumeFrom, wantsEventStream, writeSse } from '../http/sse.ts';
import type { Limiter } from '../runtime/limiter.ts';
import { sessionOutput } from '../sessions/output-stream.ts';
import type { TeamWakes } from '../store/wakes.ts';
import type { SessionService } from '../sessions/service.ts';

// Sessions of tasks, their output (JSON pages or an event stream), and the agents they run.
export function sessionRoutes(deps: { sessions: SessionService; agents: Agents; streamReads: Limiter; outputWakes: Pick<TeamWakes, 'watch'> }): Route[] {
  const { sessions, agents, streamReads, outputWakes } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/tasks/:id/sessions',
      summary: "A task's sessions (or one conversation's), oldest first",
      params: IdParams,
      query: SessionListQuery,
      responses: { 200: SessionList },
      handler: async ({ params, query }) => ({ status: 200, body: await sessions.list(params.id, query.conversation_id) }),
    }),
    route({
      method: 'GET',
      path: '/api/sessions',
      summary: "Every session (or those of one project's tasks), oldest first",
      query: AllSessionsQuery,
      responses: { 200: SessionList },
      handler: async ({ query }) => ({ status: 200, body: await sessions.listAll(query.project_id) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/sessions',
      owner: 'task',
      summary: 'Start an agent session on a ready task',
      params: IdParams,
      body: CreateSession,
      responses: { 201: Session },
      errors: ['TASK_NOT_READY', 'AGENT_REQUIRED', 'UNKNOWN_AGENT', 'AGENT_NOT_INSTALLED', 'MODE_UNSUPPORTED', 'CONFIG_INVALID', 'INTERFACE_UNSUPPORTED'],
      handler: async ({ params, body }) => {
        checkSessionInput(body, agents);
        return { status: 201, body: await sessions.create(params.id, body) };
      },
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/terminals',
      owner: 'task',
      // The shell runs on the disk that holds the worktree, and is attached there.
      remote: 'refuse',
      summary: "Open a shell in the task's worktree with the task's environment, under a pseudo-terminal (DESIGN §21): a session of kind terminal with no agent; attach with GET /api/sessions/:id/terminal",
      params: IdParams,
      responses: { 201: Session },
      errors: ['TASK_NOT_READY', 'INTERFACE_UNSUPPORTED'],
      handler: async ({ params }) => ({ status: 201, body: await sessions.startShell(params.id) }),
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/services',
      owner: 'task',
      summary: "The services of the task's .grove.json, each with its latest session",
      params: IdParams,
      responses: { 200: ServiceList },
      handler: async ({ params }) => ({ status: 200, body: await sessions.services(params.id) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/services/:name',
      owner: 'task',
      summary: "Start one of the task's services: a session of kind service, with the task's environment and ports",
      params: ServiceParams,
      responses: { 201: Session },
      errors: ['TASK_NOT_READY', 'SERVICE_RUNNING', 'CONFIG_INVALID'],
      handler: async ({ params }) => ({ status: 201, body: await sessions.startService(params.id, params.name) }),
    }),
    route({
      method: 'POST',
      path: '/api/sessions/:id/messages',
      owner: 'session',
      summary:
        "Continue a session's conversation: a new session started with the agent's resume command, or queued (202) behind the conversation's running and queued sessions; to a running terminal session, typed into its terminal (200, that session)",
      params: IdParams,
      body: CreateMessage,
      responses: { 200: Session, 201: Session, 202: Session },
      errors: ['TASK_NOT_READY', 'RESUME_UNAVAILABLE', 'RESUME_UNSUPPORTED', 'UNKNOWN_AGENT', 'AGENT_NOT_INSTALLED', 'MODE_UNSUPPORTED', 'SCHEDULE_INVALID', 'INTERFACE_UNSUPPORTED', 'SESSION_NOT_RUNNING'],
      handler: async ({ params, body }) => {
        checkArgSizes(body);
        const { status, session } = await sessions.send(params.id, body);
        return { status, body: session };
      },
    }),
    route({
      method: 'POST',
      path: '/api/sessions/:id/takeover',
      owner: 'session',
      // The agent resumes in the person's terminal, on the disk that holds the worktree.
      remote: 'refuse',
      summary:
        "Take a session's conversation over in the person's terminal (grove takeover): a new session of kind interactive, running while the client's process `pid` runs, and what the client runs: the agent's interactive resume, in the task's worktree, with the task's variables over its own environment. No output is captured",
      params: IdParams,
      body: TakeoverBody,
      responses: { 201: Takeover },
      errors: ['TASK_NOT_READY', 'SESSION_RUNNING', 'RESUME_UNAVAILABLE', 'TAKEOVER_UNSUPPORTED', 'UNKNOWN_AGENT'],
      handler: async ({ params, body }) => {
        checkArgSizes(body);
        return { status: 201, body: await sessions.takeover(params.id, body) };
      },
    }),
    route({
      method: 'POST',
      path: '/api/sessions/:id/end',
      owner: 'session',
      summary: "An interactive session's end, reported by its client with the exit code of the agent it ran (exited when 0, else failed)",
      params: IdParams,
      body: EndBody,
      responses: { 200: Session },
      errors: ['SESSION_NOT_RUNNING', 'TAKEOVER_UNSUPPORTED'],
      handler: async ({ params, body }) => ({ status: 200, body: await sessions.endInteractive(params.id, body) }),
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id',
      summary: 'Get a session',
      params: IdParams,
      responses: { 200: Session },
      handler: async ({ params }) => ({ status: 200, body: await sessions.get(params.id) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/sessions/:id',
      owner: 'session',
      summary: 'Kill a session: TERM to its process group, KILL after 5 s; answers once the group is gone. A queued session is cancelled',
      params: IdParams,
      responses: { 200: KillResult },
      errors: ['SESSION_NOT_RUNNING'],
      handler: async ({ params }) => ({ status: 200, body: await sessions.kill(params.id) }),
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id/output',
      summary: "A session's output lines: a JSON page, or with Accept: text/event-stream an SSE stream that follows the session to its end",
      params: IdParams,
      query: OutputQuery,
      responses: { 200: OutputPage },
      handler: async ({ params, query, req, res }) => {
        if (wantsEventStream(req)) {
          const after = resumeFrom(req, query.after, MAX_SEQ);
          await writeSse(res, await sessionOutput({ id: params.id, after, sessions, streamReads, team: outputWakes }));
          return null;
        }
        if (query.last !== undefined) {
          if (query.after !== undefined || query.limit !== undefined) {
            throw new GroveError('VALIDATION_FAILED', '`last` reads from the end: it does not go with `after` or `limit`', {
              errors: [{ path: '/query/last', message: 'must not be given with after or limit' }],
            });
          }
          return { status: 200, body: await sessions.lastLines(params.id, query.last) };
        }
        return { status: 200, body: await sessions.lines(params.id, query.after ?? 0, query.limit ?? OUTPUT_PAGE_DEFAULT) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id/transcript',
      owner: 'session',
      summary: "A terminal session's conversation (DESIGN §21): the transcript its agent wrote (Claude Code's, Codex's), each line as an output line",
      params: IdParams,
      responses: { 200: TranscriptView },
      errors: ['NOT_A_TERMINAL'],
      handler: async ({ params }) => ({ status: 200, body: await sessions.transcript(params.id) }),
    }),
    route({
      method: 'GET',
      path: '/api/agents',
      summary: 'Built-in and user-defined agents, and whether each one is installed',
      responses: { 200: AgentList },
      handler: async () => ({ status: 200, body: agents.list() }),
    }),
  ];
}

// What the schema cannot say about a new session's body. An agent name is looked up in an
// object, so a name such as `constructor` would find Object.prototype's member, not an agent:
// only real definitions (a command array) count. And each argument the agent gets must fit
// the OS limit in bytes, which a character count does not bound for non-ASCII text.
function checkSessionInput(body: CreateSession, agents: Agents): void {
  if (body.agent !== undefined && !(agents.has(body.agent) && Array.isArray(agents.get(body.agent).command))) {
    throw new GroveError('UNKNOWN_AGENT', `no agent named ${JSON.stringify(body.agent)}; see GET /api/agents`);
  }
  checkArgSizes(body);
}

function checkArgSizes(body: Pick<CreateSession, 'prompt' | 'args'>): void {
  const tooLong: Array<{ path: string; message: string }> = [];
  const message = `is longer than ${MAX_ARG_BYTES} bytes of UTF-8, the most one argument of a command may hold`;
  if (body.prompt !== undefined && Buffer.byteLength(body.prompt) > MAX_ARG_BYTES) tooLong.push({ path: '/prompt', message });
  for (const [i, arg] of (body.args ?? []).entries()) {
    if (Buffer.byteLength(arg) > MAX_ARG_BYTES) tooLong.push({ path: `/args/${i}`, message });
  }
  if (tooLong.length > 0) throw new GroveError('VALIDATION_FAILED', 'the request body is invalid', { errors: tooLong });
}
