// The daemon's API as typed calls (the types from schemas/), so that the CLI, `grove mcp` and the
// bridges do not each spell paths and casts; and the one paging loop of events and output.
import type { Approval, ApprovalDecision } from '../../schemas/approval.ts';
import type { Automation, AutomationListQuery, AutomationRun, CreateAutomation, PatchAutomation } from '../../schemas/automation.ts';
import type { EventPage, EventQuery, GroveEvent } from '../../schemas/event.ts';
import type { Health } from '../../schemas/health.ts';
import type { Host } from '../../schemas/host.ts';
import type { CreateIntake, Intake } from '../../schemas/intake.ts';
import type { OutputLine } from '../../schemas/output.ts';
import type { ProjectPool } from '../../schemas/pool.ts';
import type { CreateProject, Project } from '../../schemas/project.ts';
import type { OpenPull, PullRequest } from '../../schemas/pull.ts';
import type { QueueBody, QueueEntry } from '../../schemas/queue.ts';
import type { Changes, CommitResult, ChangesQuery, ConflictList, MergeBody, MergeResult, PushResult, RestoreResult, TurnList } from '../../schemas/review.ts';
import { EVENT_PAGE_MAX, OUTPUT_PAGE_MAX } from '../../schemas/pages.ts';
import type { AgentList, CreateMessage, CreateSession, KillResult, OutputPage, Service, Session } from '../../schemas/session.ts';
import type { CreatedTask, CreateTaskBody, Task, TaskSetup } from '../../schemas/task.ts';
import { sse, type SseEvent } from './sse.ts';
import type { Body, Transport } from './transport.ts';

const q = (v: unknown) => encodeURIComponent(String(v));
// A query string of the given values, those undefined left out ('' when none is given).
const query = (values: Record<string, string | number | boolean | undefined>) => {
  const s = new URLSearchParams(Object.entries(values).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]]))).toString();
  return s === '' ? '' : `?${s}`;
};

// The two ends changes and diff compare (DESIGN §17): base, work or turn:N; either left out is the default.
export type Range = ChangesQuery;

export type EventFilter = Pick<EventQuery, 'project_id' | 'task_id'>;

// Reads pages from `after` until one comes back short (the end), handing each item on; answers the
// `next` of the last page. The one paging loop: events and output are paged the same way.
export async function readPages<T>(after: number, limit: number, get: (after: number) => Promise<{ items: T[]; next: number }>, each: (item: T) => void): Promise<number> {
  for (;;) {
    const page = await get(after);
    page.items.forEach(each);
    if (page.items.length < limit) return page.next;
    after = page.next;
  }
}

export type Calls = ReturnType<typeof calls>;

export function calls(api: Transport) {
  const streamed = (path: string, headers: Record<string, string> = {}) => api.stream(path, { accept: 'text/event-stream', ...headers });
  const eventPage = (after: number, filter: EventFilter = {}, limit = EVENT_PAGE_MAX) => api.call<EventPage>('GET', `/api/events${query({ after, limit, ...filter })}`);
  const outputPage = (id: string, after: number, limit = OUTPUT_PAGE_MAX) => api.call<OutputPage>('GET', `/api/sessions/${q(id)}/output${query({ after, limit })}`);
  return {
    health: () => api.call<Health>('GET', '/api/health'),
    hosts: () => api.call<Host[]>('GET', '/api/hosts'),
    agents: () => api.call<AgentList>('GET', '/api/agents'),
    projects: () => api.call<Project[]>('GET', '/api/projects'),
    addProject: (body: CreateProject) => api.call<Project>('POST', '/api/projects', body),
    removeProject: (id: string) => api.call<void>('DELETE', `/api/projects/${q(id)}`),
    project: (id: string) => api.call<Project>('GET', `/api/projects/${q(id)}`),
    pool: (projectId: string) => api.call<ProjectPool>('GET', `/api/projects/${q(projectId)}/pool`),
    conflicts: (projectId: string) => api.call<ConflictList>('GET', `/api/projects/${q(projectId)}/conflicts`),
    queue: (projectId: string) => api.call<QueueEntry[]>('GET', `/api/projects/${q(projectId)}/queue`),
    enqueue: (projectId: string, body: QueueBody) => api.call<QueueEntry>('POST', `/api/projects/${q(projectId)}/queue`, body),
    dequeue: (projectId: string, taskId: string) => api.call<void>('DELETE', `/api/projects/${q(projectId)}/queue/${q(taskId)}`),
    /** the project's watch of its repository's issues; 404 where it has none */
    intake: (projectId: string) => api.call<Intake>('GET', `/api/projects/${q(projectId)}/intake`),
    /** made or replaced */
    putIntake: (projectId: string, body: CreateIntake) => api.call<Intake>('POST', `/api/projects/${q(projectId)}/intake`, body),
    removeIntake: (projectId: string) => api.call<void>('DELETE', `/api/projects/${q(projectId)}/intake`),
    pr: (taskId: string) => api.call<PullRequest>('GET', `/api/tasks/${q(taskId)}/pr`),
    openPr: (taskId: string, body: OpenPull = {}) => api.call<PullRequest>('POST', `/api/tasks/${q(taskId)}/pr`, body),
    automations: (filter: AutomationListQuery = {}) => api.call<Automation[]>('GET', `/api/automations${query(filter)}`),
    automation: (id: string) => api.call<Automation>('GET', `/api/automations/${q(id)}`),
    createAutomation: (body: CreateAutomation) => api.call<Automation>('POST', '/api/automations', body),
    /** enabled: false pauses it, true resumes it */
    updateAutomation: (id: string, body: PatchAutomation) => api.call<Automation>('PATCH', `/api/automations/${q(id)}`, body),
    removeAutomation: (id: string) => api.call<void>('DELETE', `/api/automations/${q(id)}`),
    /** a run now, paused or not */
    runAutomation: (id: string) => api.call<AutomationRun>('POST', `/api/automations/${q(id)}/runs`),
    /** newest first */
    automationRuns: (id: string) => api.call<AutomationRun[]>('GET', `/api/automations/${q(id)}/runs`),
    tasks: (filter: { project_id?: string } = {}) => api.call<Task[]>('GET', `/api/tasks${query(filter)}`),
    createTask: (body: CreateTaskBody) => api.call<CreatedTask>('POST', '/api/tasks', body),
    task: (id: string) => api.call<Task>('GET', `/api/tasks/${q(id)}`),
    setup: (taskId: string) => api.call<TaskSetup>('GET', `/api/tasks/${q(taskId)}/setup`),
    services: (taskId: string) => api.call<Service[]>('GET', `/api/tasks/${q(taskId)}/services`),
    /** from the merge-base to the work, or between `from` and `to` (base, work, turn:N) */
    changes: (taskId: string, range: Range = {}) => api.call<Changes>('GET', `/api/tasks/${q(taskId)}/changes${query({ ...range })}`),
    turns: (taskId: string) => api.call<TurnList>('GET', `/api/tasks/${q(taskId)}/turns`),
    restore: (taskId: string, turn: number) => api.call<RestoreResult>('POST', `/api/tasks/${q(taskId)}/restore`, { turn }),
    commit: (taskId: string, message: string) => api.call<CommitResult>('POST', `/api/tasks/${q(taskId)}/commit`, { message }),
    rebase: (taskId: string) => api.call<Task>('POST', `/api/tasks/${q(taskId)}/rebase`),
    merge: (taskId: string, body: MergeBody) => api.call<MergeResult>('POST', `/api/tasks/${q(taskId)}/merge`, body),
    push: (taskId: string, remote?: string) => api.call<PushResult>('POST', `/api/tasks/${q(taskId)}/push`, remote === undefined ? {} : { remote }),
    removeTask: (taskId: string, force = false) => api.call<Task>('DELETE', `/api/tasks/${q(taskId)}${force ? '?force=true' : ''}`),
    /** the diff's text as it comes; its headers say whether it was cut */
    diff: (taskId: string, path?: string, range: Range = {}) => api.stream(`/api/tasks/${q(taskId)}/diff${query({ path, ...range })}`),
    sessions: (taskId: string, filter: { conversation_id?: string } = {}) => api.call<Session[]>('GET', `/api/tasks/${q(taskId)}/sessions${query(filter)}`),
    startSession: (taskId: string, body: CreateSession) => api.call<Session>('POST', `/api/tasks/${q(taskId)}/sessions`, body),
    /** a follow-up in the session's conversation: the session that runs it */
    say: (sessionId: string, body: CreateMessage) => api.call<Session>('POST', `/api/sessions/${q(sessionId)}/messages`, body),
    /** a shell in the task's worktree, under a pseudo-terminal (DESIGN §21) */
    openShell: (taskId: string) => api.call<Session>('POST', `/api/tasks/${q(taskId)}/terminals`),
    startService: (taskId: string, name: string) => api.call<Session>('POST', `/api/tasks/${q(taskId)}/services/${q(name)}`),
    session: (id: string) => api.call<Session>('GET', `/api/sessions/${q(id)}`),
    kill: (id: string) => api.call<KillResult>('DELETE', `/api/sessions/${q(id)}`),
    approvals: (filter: { status?: string; task_id?: string; session_id?: string } = {}) => api.call<Approval[]>('GET', `/api/approvals${query(filter)}`),
    approval: (id: string) => api.call<Approval>('GET', `/api/approvals/${q(id)}`),
    decide: (id: string, body: ApprovalDecision) => api.call<Approval>('POST', `/api/approvals/${q(id)}`, body),
    eventPage,
    outputPage,
    /** a session's last `n` output lines */
    outputTail: (id: string, n: number) => api.call<OutputPage>('GET', `/api/sessions/${q(id)}/output${query({ last: n })}`),
    /** a session's output lines after `after`, every page; answers the seq to read on from */
    output: (id: string, after: number, each: (line: OutputLine) => void) =>
      readPages(after, OUTPUT_PAGE_MAX, async (a) => ((p) => ({ items: p.lines, next: p.next }))(await outputPage(id, a)), each),
    /** the newest `n` events (of a filter) and the newest seq, read page by page */
    async lastEvents(n: number, filter: EventFilter = {}): Promise<{ recent: GroveEvent[]; last: number }> {
      const recent: GroveEvent[] = [];
      const last = await readPages(0, EVENT_PAGE_MAX, async (a) => ((p) => ({ items: p.events, next: p.next }))(await eventPage(a, filter)), (e) => {
        recent.push(e);
        if (recent.length > n) recent.shift();
      });
      return { recent, last };
    },
    /** the live events after seq `after`, as the SSE body (to destroy() early) and its events */
    events: async (after: number, filter: EventFilter = {}) => follow(await streamed(`/api/events${query({ after, ...filter })}`)),
    /** a session's output as it is printed, to its `end` */
    followOutput: async (id: string, headers: Record<string, string> = {}) => follow(await streamed(`/api/sessions/${q(id)}/output`, headers)),
    /** a task's setup as it runs, to its `end` */
    followSetup: async (taskId: string) => follow(await streamed(`/api/tasks/${q(taskId)}/setup`)),
  };
}

export interface Followed {
  body: Body;
  events: AsyncGenerator<SseEvent>;
}

function follow(body: Body): Followed {
  return { body, events: sse(body) };
}

/** the transport with its typed calls: what the CLI, `grove mcp` and the bridges are given */
export type Client = Transport & Calls;

export function withCalls(api: Transport): Client {
  return { ...api, ...calls(api) };
}
