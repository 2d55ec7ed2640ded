import { IdParams } from '../../schemas/common.ts';
import { AgentList, CreateSession, KillResult, OutputPage, OutputQuery, Session, SessionList } from '../../schemas/session.ts';
import type { Agents } from '../agents.ts';
import { route, type Route } from '../http/route.ts';
import type { SessionService } from '../sessions/service.ts';
import { resumeFrom, streamOutput, wantsEventStream } from '../sessions/sse.ts';

// Sessions of tasks, their output (JSON pages or an event stream), and the agents they run.
export function sessionRoutes(deps: { sessions: SessionService; agents: Agents }): Route[] {
  const { sessions, agents } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/tasks/:id/sessions',
      summary: "A task's sessions, oldest first",
      params: IdParams,
      responses: { 200: SessionList },
      handler: async ({ params }) => ({ status: 200, body: await sessions.list(params.id) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/sessions',
      summary: 'Start an agent session on a ready task',
      params: IdParams,
      body: CreateSession,
      responses: { 201: Session },
      errors: ['TASK_NOT_READY', 'AGENT_REQUIRED', 'UNKNOWN_AGENT', 'AGENT_NOT_INSTALLED', 'CONFIG_INVALID'],
      handler: async ({ params, body }) => ({ status: 201, body: await sessions.create(params.id, body) }),
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
      summary: 'Kill a session: TERM to its process group, KILL after 5 s; answers once the group is gone',
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
          await streamOutput({ id: params.id, after: resumeFrom(req, query.after), res, sessions });
          return null;
        }
        return { status: 200, body: await sessions.lines(params.id, query.after ?? 0, query.limit ?? 1000) };
      },
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
