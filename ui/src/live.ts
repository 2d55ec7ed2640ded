// What the dashboard shows, kept current by GET /api/events (DESIGN §11), never by polling: the
// state is loaded once after noting the newest event, then every later event is applied.
import { EVENT_TYPES } from '../../schemas/event-types.ts';
import type { Approval } from '../../schemas/approval.ts';
import type { GroveEvent } from '../../schemas/event.ts';
import type { Health } from '../../schemas/health.ts';
import type { Host, TeamHost } from '../../schemas/host.ts';
import type { Project } from '../../schemas/project.ts';
import type { Restack } from '../../schemas/restack.ts';
import type { Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import { api, apiUrl, messageOf } from './api.ts';
import { automationFeed, emptyAutomations, isAutomationEvent, loadAutomations, type AutomationState } from './automation-live.ts';
import { applyIntake, emptyIntake, isIntakeEvent, type IntakeState } from './intake-live.ts';
import { applyPull, emptyPulls, isPullEvent, type PullState } from './pull-live.ts';
import { emptyQueues, isQueueEvent, loadQueues, queueFeed, type QueueState } from './queue-live.ts';

// How long the page waits before asking again a daemon (or a host) that did not answer.
export const RETRY_MS = 2000;

export interface LiveState extends QueueState, AutomationState, IntakeState, PullState {
  projects: Map<string, Project>;
  tasks: Map<string, Task>;
  sessions: Map<string, Session>;
  /** the approvals still pending (DESIGN §15): one answered anywhere leaves with its event */
  approvals: Map<string, Approval>;
  /** the store's hosts (DESIGN §14.2), online or not as their host.online/host.offline events say */
  hosts: Map<string, TeamHost>;
  /** each stacked task's last restack seen on the stream (DESIGN §17) */
  restacks: Map<string, SeenRestack>;
  /** the store is a team's (PostgreSQL): the board then names each task's host */
  shared: boolean;
  /** false until the first load is done */
  loaded: boolean;
  /** the event stream is open */
  connected: boolean;
  /** why the last load or stream failed, while the page asks again; null once it is live */
  error: string | null;
}

// A restack with its event's place in the stream and time.
export type SeenRestack = Restack & { seq: number; at: string };

type Listener = () => void;

// The host a row is on, by name, on a team's store; null on a store of one host (nothing to say).
export function hostOf(state: LiveState, hostId: string): { name: string; online: boolean } | null {
  if (!state.shared) return null;
  const h = state.hosts.get(hostId);
  return { name: h?.name ?? hostId.slice(0, 8), online: h?.online ?? false };
}

// One per page: the state, its listeners, and the stream that feeds it.
export function createLive() {
  const state: LiveState = { projects: new Map(), tasks: new Map(), sessions: new Map(), approvals: new Map(), hosts: new Map(), restacks: new Map(), ...emptyQueues(), ...emptyAutomations(), ...emptyIntake(), ...emptyPulls(), shared: false, loaded: false, connected: false, error: null };
  const listeners = new Set<Listener>();
  let version = 0;
  let source: EventSource | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const changed = () => {
    version++;
    for (const l of listeners) l();
  };

  const queue = queueFeed(() => state, changed);
  const automation = automationFeed(() => state, changed);

  function apply(e: GroveEvent): void {
    if (isQueueEvent(e)) return queue.apply(e);
    if (isAutomationEvent(e)) return automation.apply(e, () => [...state.projects.keys()]);
    if (isIntakeEvent(e)) return applyIntake(state, e);
    // A pull request's event carries the pull request, not a session (a round's names its follow-up).
    if (isPullEvent(e)) return applyPull(state, e);
    switch (e.type) {
      case 'project.added':
        state.projects.set(e.project_id!, e.data as Project);
        break;
      case 'project.removed':
        state.projects.delete(e.project_id!);
        for (const t of [...state.tasks.values()]) if (t.project_id === e.project_id) state.tasks.delete(t.id);
        break;
      case 'task.created':
      case 'task.status':
      case 'task.merged':
      case 'task.archived': {
        // A restack's event carries it next to the task: kept apart, as the task's next event has none.
        const { restack, ...task } = e.data as Task & { restack?: Restack };
        state.tasks.set(e.task_id!, task);
        if (restack) state.restacks.set(e.task_id!, { ...restack, seq: e.seq, at: e.at });
        break;
      }
      // An approval is not a session: its session's `waiting` comes with session.waiting.
      case 'approval.requested':
      case 'approval.decided': {
        const a = e.data as Approval;
        if (a.status === 'pending') state.approvals.set(a.id, a);
        else state.approvals.delete(a.id);
        break;
      }
      // A host's event carries the host as GET /api/hosts lists it.
      case 'host.online':
      case 'host.offline': {
        const h = e.data as TeamHost;
        state.hosts.set(h.id, h);
        break;
      }
      default:
        state.sessions.set(e.session_id!, e.data as Session);
    }
  }

  // The first load, asked again until it succeeds: a host that cannot be reached shows why.
  async function load(): Promise<void> {
    try {
      await loadOnce();
    } catch (err) {
      state.error = messageOf(err);
      changed();
      retry = setTimeout(() => void load(), RETRY_MS);
    }
  }

  async function loadOnce(): Promise<void> {
    const health = await api<Health>('GET', '/api/health');
    // The team's hosts name each row's host on a shared store only; not asked otherwise, as the
    // list also waits on the saved SSH hosts' answers.
    const listed = api<Project[]>('GET', '/api/projects');
    const [projects, tasks, sessions, approvals, hosts, automations] = await Promise.all([
      listed,
      api<Task[]>('GET', '/api/tasks'),
      api<Session[]>('GET', '/api/sessions'),
      api<Approval[]>('GET', '/api/approvals?status=pending'),
      health.shared ? api<Host[]>('GET', '/api/hosts') : ([] as Host[]),
      loadAutomations(listed),
    ]);
    state.projects = new Map(projects.map((p) => [p.id, p]));
    state.tasks = new Map(tasks.map((t) => [t.id, t]));
    state.sessions = new Map(sessions.map((s) => [s.id, s]));
    state.approvals = new Map(approvals.map((a) => [a.id, a]));
    state.hosts = new Map(hosts.filter((h): h is TeamHost => h.kind === 'team').map((h) => [h.id, h]));
    state.queues = await loadQueues(projects.map((p) => p.id));
    state.automations = automations;
    state.shared = health.shared;
    state.loaded = true;
    state.error = null;
    changed();
    // Every event after the one noted before loading: a change made meanwhile is applied again,
    // in order, and the last one wins.
    follow(health.last_event_seq);
  }

  function follow(after: number): void {
    source?.close();
    // EventSource resumes after the last id it saw by itself when the connection drops; an
    // answer that is not a stream (a host's forward refused while it is away) closes it for good,
    // so it is opened again here, after the last event applied.
    const here = (source = new EventSource(apiUrl(`/api/events?after=${after}`)));
    here.onopen = () => {
      state.connected = true;
      state.error = null;
      changed();
    };
    here.onerror = () => {
      state.connected = false;
      state.error ??= 'the event stream was interrupted';
      if (here.readyState === EventSource.CLOSED && source === here) {
        // The stream's refusal is not readable here: the same daemon's health says why.
        void api('GET', '/api/health').then(
          () => {},
          (err: unknown) => {
            if (state.connected) return;
            state.error = messageOf(err);
            changed();
          },
        );
        retry = setTimeout(() => follow(lastSeq), RETRY_MS);
      }
      changed();
    };
    here.addEventListener('end', () => {
      // Dropped as too slow (DESIGN §11): resume from the last event applied.
      follow(lastSeq);
    });
    let lastSeq = after;
    const onEvent = (m: MessageEvent<string>) => {
      const e = JSON.parse(m.data) as GroveEvent;
      if (e.seq <= lastSeq) return;
      lastSeq = e.seq;
      apply(e);
      changed();
    };
    for (const type of EVENT_TYPES) here.addEventListener(type, onEvent as EventListener);
  }

  return {
    state,
    load,
    get version() {
      return version;
    },
    subscribe(l: Listener): () => void {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    // A task or session an action answered with, shown before its event arrives. Only a new one:
    // an event applied meanwhile is newer than the answer, and must not be overwritten by it.
    put(kind: 'task' | 'session', value: Task | Session): void {
      const map: Map<string, Task | Session> = kind === 'task' ? state.tasks : state.sessions;
      if (map.has(value.id)) return;
      map.set(value.id, value);
      changed();
    },
    close(): void {
      clearTimeout(retry);
      source?.close();
      source = null;
    },
  };
}

export type Live = ReturnType<typeof createLive>;

