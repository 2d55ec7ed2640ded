import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import type { Project } from '../../schemas/project.ts';
import type { QueueBody, QueueEntry } from '../../schemas/queue.ts';
import type { CreateMessage, Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import type { SetupMessage } from '../../workers/setup.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import { GroveError } from '../errors.ts';
import { stopOrphanGroup } from '../proc/orphan.ts';
import type { Logger } from '../runtime/log.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import { once } from '../runtime/once.ts';
import type { Listen } from '../runtime/signal.ts';
import type { Failure, QueueTable } from '../store/queue.ts';
import { retryWhenUnreachable, StoreUnreachableError } from '../store/store.ts';
import { taskEnv } from '../tasks/env.ts';
import type { Pool } from '../tasks/threads.ts';
import type { TaskReader } from '../tasks/read.ts';
import type { Review } from './review.ts';

// How many follow-ups `fix` sends before a task stays out (DESIGN §17).
export const MAX_FIXES = 3;
// How much of a failed check's output its event and entry keep: what a person or agent reads first.
export const OUTPUT_TAIL = 50;
// The lines of the tail a follow-up prompt quotes.
const PROMPT_TAIL = 20;

export interface QueueDeps {
  queue: QueueTable;
  read: Pick<TaskReader, 'get'>;
  getProject: (id: string) => Promise<Project>;
  /** this host's projects: their queues are this host's to land (DESIGN §14.2) */
  localProjects: () => Promise<Project[]>;
  configs: Pick<ProjectConfigs, 'load'>;
  review: Pick<Review, 'rebase' | 'merge'>;
  pool: Pick<Pool, 'run'>;
  sessions: {
    list(taskId: string): Promise<Session[]>;
    get(id: string): Promise<Session>;
    send(id: string, body: CreateMessage): Promise<{ session: Session }>;
    isBusy(s: Session): boolean;
    ended: Listen<string>;
  };
  setupTimeoutS: number;
  log: Logger;
}

// The merge queue (DESIGN §17): tasks land one at a time per project and base branch, each
// rebased onto the base's tip, checked, then merged, with the review's own rebase and merge (so
// each runs under its landing intent, and a restart finishes or undoes one cut short).
export function createMergeQueue(deps: QueueDeps) {
  const { queue, log } = deps;
  // One drain at a time per project and base; a wake during one makes one more (a wake right as
  // its last claim found nothing would otherwise wait for the next).
  const running = createCoalescer<string>((key) => {
    const [projectId, base] = key.split('\0') as [string, string];
    return drain(projectId, base);
  });
  // What stops the check running now, per task.
  const checks = new Map<string, () => void>();
  let closed = false;

  async function projectOf(id: string): Promise<Project> {
    return deps.getProject(id);
  }

  // Runs every queue of the project with an entry waiting (one running already goes round once more).
  function wake(projectId: string): void {
    if (closed) return;
    queue.waitingBases(projectId).then(
      (bases) => {
        for (const base of bases) void running.run(`${projectId}\0${base}`);
      },
      (err: unknown) => {
        log.error({ err, project: projectId }, 'reading the merge queue failed');
        retryWhenUnreachable(err, () => wake(projectId));
      },
    );
  }

  async function drain(projectId: string, base: string): Promise<void> {
    try {
      while (!closed) {
        const entry = await queue.claim(projectId, base);
        if (!entry) return;
        await land(entry);
      }
    } catch (err) {
      log.error({ err, project: projectId, base }, 'the merge queue stopped');
      retryWhenUnreachable(err, () => wake(projectId));
    }
  }

  // The project's checks in the task's worktree with its environment, each bounded by
  // setup_timeout_s; null when they pass, else the failure with the output's last lines.
  async function check(project: Project, taskId: string): Promise<Failure | null> {
    const config = deps.configs.load(project.path);
    const commands = config.check ?? [];
    if (commands.length === 0) return null;
    const task = await deps.read.get(taskId); // as the rebase left it
    const { port1, port2 } = new MessageChannel();
    const tail: string[] = [];
    let failed: string | null = null;
    let sawDone: () => void = () => {};
    const lastMessage = new Promise<void>((resolve) => (sawDone = resolve));
    // The check's process group is kept while it runs: a start after a kill stops what is left.
    let pids: Promise<void> = Promise.resolve();
    const keepPid = (pid: number | null, start: string | null) =>
      (pids = pids
        .then(() => queue.setCheckPid(task.id, pid, start))
        .then(() => {
          if (pid !== null) log.debug({ task: task.id, pid }, "a check's process is recorded");
        })
        .catch((err: unknown) => log.warn({ err, task: task.id }, 'recording a check\'s process failed')));
    port1.on('message', (m: SetupMessage) => {
      if (m.type === 'done') return sawDone();
      if (m.type === 'spawned') keepPid(m.pid, m.pid_start);
      if (m.type === 'lines') {
        for (const l of m.lines) tail.push(l.text);
        tail.splice(0, Math.max(0, tail.length - OUTPUT_TAIL));
      } else if (m.type === 'end' && m.exit_code !== 0) {
        const how = m.timed_out ? `ran past setup_timeout_s (${deps.setupTimeoutS} s)` : m.signal ? `was killed by ${m.signal}` : `exited with ${m.exit_code}`;
        failed = `the check ${JSON.stringify(commands[m.idx])} ${how}`;
      }
    });
    checks.set(task.id, () => port1.postMessage({ type: 'cancel' }));
    try {
      const res = await deps.pool.run('runSetup', {
        cwd: path.join(project.path, task.worktree_path),
        commands,
        env: taskEnv(project, task, config),
        timeoutMs: deps.setupTimeoutS * 1000,
        port: port2,
      });
      if (!res.ok) {
        sawDone();
        return { reason: `the checks could not run: ${res.message}`, output: tail };
      }
      await lastMessage;
      if (!res.failed) return null;
      return { reason: failed ?? 'the checks were stopped', output: tail };
    } finally {
      checks.delete(task.id);
      port1.close();
      keepPid(null, null);
      await pids;
    }
  }

  // One landing: rebase, checks, merge. Whatever fails takes the task out with why.
  async function land(entry: QueueEntry): Promise<void> {
    const id = entry.task_id;
    let failure: Failure;
    try {
      const task = await deps.read.get(id);
      if (task.status === 'archived') throw new GroveError('TASK_NOT_QUEUEABLE', 'the task was archived');
      const project = await projectOf(entry.project_id);
      log.info({ task: id, base: entry.base, try: entry.tries }, 'landing a queued task');
      await deps.review.rebase(id);
      if (closed) return; // cut short: its landing waits for the next start
      const failedCheck = await check(project, id);
      if (closed) return; // cut short: its landing waits for the next start
      if (failedCheck) {
        failure = failedCheck;
      } else {
        const merged = await deps.review.merge(id, { strategy: entry.strategy });
        await queue.landed(entry, { commit: merged.commit, strategy: merged.strategy });
        log.info({ task: id, base: entry.base, commit: merged.commit }, 'landed a queued task');
        return;
      }
    } catch (err) {
      // A store out of reach, or a stop: the entry stays `landing`, tried again at the next start.
      if (closed || err instanceof StoreUnreachableError || (err instanceof GroveError && err.code === 'STORE_UNAVAILABLE')) throw err;
      if (!(err instanceof GroveError)) log.error({ err, task: id }, 'landing a queued task failed');
      failure = err instanceof GroveError ? { reason: err.detail, ...(err.files ? { files: err.files } : {}) } : { reason: 'grove failed while landing it (see the daemon log)' };
    }
    await failed(entry, failure);
  }

  // Out of the queue; with `fix` and follow-ups left, the task's latest conversation is told what
  // failed, and the entry waits for that session to end.
  async function failed(entry: QueueEntry, why: Failure): Promise<void> {
    log.info({ task: entry.task_id, reason: why.reason }, 'a queued task failed to land');
    if (!entry.fix) return queue.failed(entry, why, null);
    if (entry.tries > MAX_FIXES) return queue.failed(entry, why, null, `tries are spent: ${MAX_FIXES} follow-ups were sent`);
    const latest = (await deps.sessions.list(entry.task_id)).findLast((s) => s.kind === 'agent');
    if (!latest) return queue.failed(entry, why, null, 'the task has no conversation to send a follow-up to');
    try {
      const { session } = await deps.sessions.send(latest.id, { prompt: followUp(entry, why) });
      await queue.failed(entry, why, session.id);
      // It may have ended before the entry said whose end to wait for.
      if (!deps.sessions.isBusy(await deps.sessions.get(session.id))) await requeue(entry.task_id, session.id);
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      await queue.failed(entry, why, null, `the follow-up could not be sent: ${err.detail}`);
    }
  }

  async function requeue(taskId: string, sessionId: string): Promise<void> {
    const e = await queue.requeue(taskId, sessionId);
    if (e) {
      log.info({ task: taskId, session: sessionId }, 'a fixed task is queued again');
      wake(e.project_id);
    }
  }

  // A session ended: the entry waiting for it, if any, goes back in its queue.
  const stopEnded = deps.sessions.ended.onAnyChange((sessionId) => {
    if (closed) return;
    void (async () => {
      const s = await deps.sessions.get(sessionId);
      if (s.kind !== 'agent') return;
      const e = await queue.get(s.task_id);
      if (e?.state === 'fixing' && e.fix_session === sessionId) await requeue(e.task_id, sessionId);
    })().catch((err: unknown) => log.error({ err, session: sessionId }, 'queueing a fixed task again failed'));
  });

  return {
    async add(projectId: string, body: QueueBody): Promise<QueueEntry> {
      const project = await projectOf(projectId);
      const task = await deps.read.get(body.task_id);
      if (task.project_id !== project.id) throw new GroveError('TASK_NOT_QUEUEABLE', `task ${task.name} is not a task of project ${project.name}`);
      if (task.status === 'archived') throw new GroveError('TASK_NOT_QUEUEABLE', `task ${task.name} is archived`);
      const entry = await queue.add({ task_id: task.id, project_id: project.id, base: task.base, strategy: body.strategy ?? 'merge', fix: body.fix === true });
      if (!entry) throw new GroveError('ALREADY_QUEUED', `task ${task.name} is already queued`);
      wake(project.id);
      return entry;
    },
    async list(projectId: string): Promise<QueueEntry[]> {
      const project = await projectOf(projectId);
      return queue.list(project.id);
    },
    async remove(projectId: string, taskId: string): Promise<void> {
      const project = await projectOf(projectId);
      const entry = await queue.get(taskId);
      if (!entry || entry.project_id !== project.id) throw new GroveError('NOT_FOUND', `task ${taskId} is not in the queue of project ${project.name}`);
      const res = await queue.remove(taskId);
      if (res === null) throw new GroveError('NOT_FOUND', `task ${taskId} is not in the queue of project ${project.name}`);
      if (res === 'landing') throw new GroveError('QUEUE_LANDING', 'the task is being landed now; it leaves the queue when the landing ends');
    },
    // At start, after the landing journal put right what a stop cut short: this host's landings
    // wait again in their place, fixes whose session ended meanwhile are queued again, and the
    // queues run.
    async start(): Promise<void> {
      const ids = (await deps.localProjects()).map((p) => p.id);
      const reset = await queue.resetLanding(ids);
      await Promise.all(reset.map((r) => stopOrphanGroup(r.pid, r.pid_start)));
      if (reset.length > 0) log.warn({ entries: reset.length }, 'landings of the merge queue cut short by a stop are tried again');
      for (const f of await queue.fixing(ids)) {
        const s = await deps.sessions.get(f.fix_session).catch(() => null);
        if (!s || !deps.sessions.isBusy(s)) await requeue(f.task_id, f.fix_session);
      }
      for (const id of await queue.projectsWaiting(ids)) wake(id);
    },
    close: once(async () => {
      closed = true;
      stopEnded();
      for (const cancel of checks.values()) cancel();
      await running.close();
    }),
  };
}

export type MergeQueue = ReturnType<typeof createMergeQueue>;

// What the follow-up says: what failed, the files in conflict or the check's last lines.
function followUp(entry: QueueEntry, why: Failure): string {
  const lines = [`grove's merge queue could not land this task onto ${entry.base}: ${why.reason}.`];
  if (why.files?.length) lines.push(`Rebasing onto ${entry.base} conflicts in these files:`, ...why.files.map((f) => `- ${f}`), `Rebase the branch onto ${entry.base}, resolve the conflicts and commit.`);
  if (why.output?.length) lines.push("The check's last lines:", ...why.output.slice(-PROMPT_TAIL), 'Make the check pass and commit.');
  lines.push('The task goes back in the queue when you end.');
  return lines.join('\n');
}
