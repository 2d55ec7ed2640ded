import type { GroveEvent } from '../../schemas/event.ts';
import type { Project } from '../../schemas/project.ts';
import type { CreateSession, Session } from '../../schemas/session.ts';
import type { CreatedTask, CreateTaskInput, Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { Listen } from '../runtime/signal.ts';
import type { Ask } from '../sessions/start.ts';
import type { SessionRecord } from '../store/sessions.ts';
import { retryWhenUnreachable, StoreUnreachableError } from '../store/store.ts';
import type { StoredTask, TasksTable } from '../store/tasks.ts';
import type { Result } from '../../workers/result.ts';


export interface DependenciesDeps {
  tasks: Pick<TasksTable, 'get' | 'stackedOnMerged'>;
  getProject: (id: string) => Promise<Project>;
  create: (input: CreateTaskInput) => Promise<{ status: 201 | 202; task: Task }>;
  /** 'settled': nothing left to do, the task is no longer stacked on that branch */
  restack: (id: string, parent: { id: string; branch: string; base: string }) => Promise<'running' | 'settled' | Result<object>>;
  sessions: {
    planFirst: (projectPath: string, input: CreateSession) => Ask;
    queueFirst: (taskId: string, ask: Ask, after: string[]) => Promise<Session>;
    get: (id: string) => Promise<Session>;
    waitingForTasks: (hostId: string) => Promise<SessionRecord[]>;
    startWaiting: (rec: SessionRecord) => Promise<void>;
    failWaiting: (rec: SessionRecord, reason: string) => Promise<void>;
  };
  /** every committed event, this host's and (on a team store) every other's */
  committed: Listen<GroveEvent>;
  hostId: string;
  log: Logger;
}

// Events after which a waiting session may start or end, or a stacked task be restacked: a task
// merged, archived or became ready; an agent session ended (a restack waits for none to run).
function wakes(e: GroveEvent): boolean {
  if (e.type === 'task.merged' || e.type === 'task.archived' || e.type === 'task.status') return true;
  if (e.type !== 'session.status') return false;
  const status = (e.data as { status?: string } | null)?.status;
  return status !== 'queued' && status !== 'starting' && status !== 'running';
}

// A task the waiting session can no longer wait for: gone, or archived without having merged.
function lost(t: StoredTask | null): boolean {
  return t === null || (t.status === 'archived' && t.merged_at === null);
}

// Dependencies between tasks (DESIGN §17): a task made with its first session, which waits
// `queued` until every task of `after` has merged; and stacked tasks restacked once the task
// they are stacked on merges. "Merged" is the task's `merged_at`, which a landing sets through
// tasks.markMerged with its `task.merged` event (merge, a landing recovered at start; the merge
// queue lands through it too). The owner of the waiting task (its worktree's host) acts; every
// host's events wake it.
export function createDependencies(deps: DependenciesDeps) {
  const { tasks, sessions, hostId, log } = deps;
  // A restack that failed, by task, with the parent's merge it was tried after: it is tried
  // again after that parent's next merge, the task's next session end (its work may be committed
  // or fixed by then) or a restart, not on every event.
  const failed = new Map<string, string>();
  let closed = false;

  // One task's restack or one session's start: its failure is logged and is no other's; only an
  // unreachable store ends the sweep (it is tried again once the store answers).
  async function alone(what: object, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (err instanceof StoreUnreachableError) throw err;
      log.error({ err, ...what }, 'a dependency step failed');
    }
  }

  async function restackAll(): Promise<void> {
    for (const s of await tasks.stackedOnMerged(hostId)) {
      if (failed.get(s.id) === s.merged_commit) continue;
      await alone({ task: s.id, after: s.parent }, async () => {
        // Failed until it goes through: a throw is not tried again on every event either.
        failed.set(s.id, s.merged_commit);
        const res = await deps.restack(s.id, { id: s.parent, branch: s.parent_branch, base: s.parent_base }).catch((err: unknown) => {
          if (!(err instanceof GroveError)) throw err;
          return { ok: false as const, code: err.code, message: err.detail };
        });
        if (res === 'running' || res === 'settled' || res.ok) failed.delete(s.id);
      });
    }
  }

  // A waiting session starts once its task is past setup and every task it waits for merged, or
  // ends `failed` naming the task that was archived unmerged.
  async function settle(rec: SessionRecord): Promise<void> {
    const task = await tasks.get(rec.task_id);
    // An archive cancels its task's queued sessions itself.
    if (task === null || task.status === 'archived') return;
    const after = await Promise.all((rec.after ?? []).map(async (id) => ({ id, task: await tasks.get(id) })));
    const gone = after.find((a) => lost(a.task));
    if (gone) {
      const name = gone.task ? `${gone.task.name} (${gone.id})` : gone.id;
      return sessions.failWaiting(rec, `task ${name} was archived without being merged; this session waited for it to merge`);
    }
    const waiting = after.filter((a) => a.task!.merged_at === null).map((a) => a.id);
    if (waiting.length > 0 || task.status === 'setting_up') {
      log.debug({ session: rec.id, task: rec.task_id, waiting, setting_up: task.status === 'setting_up' }, 'session still waits');
      return;
    }
    await sessions.startWaiting(rec);
  }

  async function sweepOnce(): Promise<void> {
    await restackAll();
    for (const rec of await sessions.waitingForTasks(hostId)) await alone({ session: rec.id }, () => settle(rec));
  }

  // One sweep at a time; a wake during one makes one more.
  const sweeper = createCoalescer<void>(async () => {
    try {
      await sweepOnce();
    } catch (err) {
      log.error({ err }, 'starting or restacking waiting tasks failed');
      retryWhenUnreachable(err, () => void (closed || sweep()));
    }
  });
  const sweep = (): Promise<void> => sweeper.run();

  // A refusal of the session's fields names them where this request has them, under /session.
  function inSession<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof GroveError) || !err.errors) throw err;
      throw new GroveError(err.code, err.detail, { errors: err.errors.map((e) => ({ ...e, path: `/session${e.path}` })) });
    }
  }

  // POST /api/tasks with `session` (and `after`): all is checked before the task is made.
  async function create(input: CreateTaskInput): Promise<{ status: 201 | 202; task: CreatedTask }> {
    const { after, session, ...taskInput } = input;
    if (session === undefined) {
      if (after !== undefined) {
        throw new GroveError('VALIDATION_FAILED', '`after` needs `session`: it names the tasks a first session waits for', {
          errors: [{ path: '/session', message: 'required with after' }],
        });
      }
      return deps.create(taskInput);
    }
    const project = await deps.getProject(input.project_id);
    const ask = inSession(() => sessions.planFirst(project.path, session));
    for (const id of after ?? []) {
      const t = await tasks.get(id);
      if (t === null) throw new GroveError('AFTER_INVALID', `after names task ${id}, which does not exist`);
      // Archived, merged or not: an unmerged one never will merge, a merged one is nothing to wait for.
      if (t.status === 'archived') throw new GroveError('AFTER_INVALID', `after names task ${t.name} (${id}), which is archived: only a live task can be waited for`);
    }
    const { status, task } = await deps.create(taskInput);
    const queued = await sessions.queueFirst(task.id, ask, after ?? []);
    // Nothing to wait for (or all merged already): it starts now, and the answer says so.
    if (input.wait !== false) await sweep();
    else void sweep();
    return { status, task: { ...task, session: input.wait !== false ? await sessions.get(queued.id) : queued } };
  }

  const stop = deps.committed.onAnyChange((e) => {
    if (!wakes(e)) return;
    if (e.type === 'session.status' && e.task_id !== null) failed.delete(e.task_id);
    void sweep();
  });

  return {
    create,
    // At start, after sessions re-attached: what merged or was archived while the daemon was down.
    start: () => sweep(),
    close: once(async () => {
      closed = true;
      stop();
      await sweeper.close();
    }),
  };
}

export type Dependencies = ReturnType<typeof createDependencies>;
