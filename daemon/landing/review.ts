import path from 'node:path';
import type { Project } from '../../schemas/project.ts';
import type { Changes, CommitResult, ConflictList, MergeBody, MergeResult, PushResult, Range, RestoreResult, TurnList } from '../../schemas/review.ts';
import type { TurnRef } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import { createKeyedMutex, type KeyedMutex } from '../runtime/keyed-mutex.ts';
import { createKeyedLimiter, createLimiter } from '../runtime/limiter.ts';
import type { TasksTable } from '../store/tasks.ts';
import type { Fail, Result } from '../../workers/result.ts';
import type { LandingJournal } from '../journal/landing.ts';
import type { RestackOf } from '../../schemas/journal.ts';
import { recordRestack, touching, type Landings } from './landings.ts';
import { fromWorker, runBound, timeBound, type Caller, type Pool, type RunBound } from '../tasks/threads.ts';
import type { TaskReader } from '../tasks/read.ts';
import type { TaskGate } from '../tasks/gate.ts';
import type { Logger } from '../runtime/log.ts';

export interface ReviewDeps {
  tasks: TasksTable;
  read: TaskReader;
  getProject: (id: string) => Promise<Project>;
  pool: Pick<Pool, 'run'>;
  /** what moves a project's base or its worktrees takes turns per project: creation, archive, merge */
  perProject: KeyedMutex;
  /** rebases and merges into a checkout run under an intent; what one cut short left is put right first */
  landings: Pick<Landings, 'run' | 'settle'>;
  landingJournal: Pick<LandingJournal, 'fileFor'>;
  /** what writes one task's branch or worktree takes turns per task: commit, rebase, merge, archive */
  perTask: KeyedMutex;
  /** the bound of review and landing git (user config git_timeout_s) */
  gitTimeoutS: number;
  /** a commit runs the repository's hooks, the project's own commands, bounded like setup */
  setupTimeoutS: number;
  /** where reads keep their index copies and objects, and a commit its index's backup */
  scratch: string;
  /** a restore holds session starts of its task off while it rewrites the worktree */
  gate: Pick<TaskGate, 'admit' | 'isClosing'>;
  /** the task's agent session that has not ended, if any: a restore waits for none (DESIGN §17) */
  runningAgent: (taskId: string) => Promise<string | null>;
  log: Logger;
}


// Reads of one project's git at a time: hung ones (a slow filter) wait out their bound or their
// client, and must not take every thread of the review pool from the other projects.
export const READS_PER_PROJECT = 4;

// Turns recorded at once, whatever their task (see `recording` below).
export const TURNS_AT_ONCE = 2;

// Review and landing of a task's work (DESIGN §9). All git runs in the review pool, bounded and
// stopped when the client goes; reads take no lock, writes take their task's turn (and merge,
// which moves the base, the project's too).
export function createReview(deps: ReviewDeps) {
  const { pool, landings, scratch } = deps;
  const reads = createKeyedLimiter(READS_PER_PROJECT);
  // A task's turns are recorded one at a time: ends racing for the same number would each make
  // the turn again on the next one, their git work done over and over, and give up after a few.
  const turnsOf = createKeyedMutex();
  // Turns are recorded two at a time: forty sessions ending at once ran sixteen gits at once on
  // two cores, and every API answer waited behind them. Two, so that one slow repository does not
  // hold up every other task's end.
  const recording = createLimiter(TURNS_AT_ONCE);

  // A request's git_timeout_s, counted from its arrival: made before it waits for anything.
  const bound = (what: string, caller: Caller): RunBound => runBound(timeBound(what, 'git_timeout_s', deps.gitTimeoutS), 'GIT_TIMEOUT', caller);

  // A read, in its project's line; one whose bound runs out or whose client goes while it waits
  // never runs, and answers as its bound's signal says.
  function read<T>(projectId: string, b: RunBound, fn: () => Promise<T>): Promise<T> {
    return reads.run(projectId, fn, b.signal);
  }

  // A task with its worktree: an archived one, or one whose folder is gone, has nothing to review.
  async function worktreeOf(id: string): Promise<{ task: Task; project: Project; worktree: string }> {
    const task = await deps.read.get(id);
    if (task.status === 'archived' || task.status === 'setting_up' || task.worktree_missing) {
      const why = task.worktree_missing ? 'its worktree is missing' : `it is ${task.status}`;
      throw new GroveError('TASK_NOT_READY', `task ${task.name} has no worktree to review: ${why}`);
    }
    const project = await deps.getProject(task.project_id);
    return { task, project, worktree: path.join(project.path, task.worktree_path) };
  }

  // Reads take no lock, so one may fail because an archive removed the worktree under it: once
  // the project's worktree changes have settled, a task left without one is TASK_NOT_READY.
  async function readFailed(id: string, project: Project, failure: Fail, b: RunBound): Promise<never> {
    if (failure.code !== 'GIT_TIMEOUT' && failure.code !== 'UNAVAILABLE') {
      await deps.perProject.run(project.id, async () => {}, { signal: b.signal });
      await worktreeOf(id);
    }
    throw fromWorker(failure);
  }

  return {
    async changes(id: string, range: Range = {}, caller: Caller = {}): Promise<Changes> {
      const b = bound('reading the changes', caller);
      const { task, project, worktree } = await worktreeOf(id);
      const res = await read(project.id, b, () => pool.run('taskChanges', { worktree, base: task.base, task: id, ...range, scratch }, b));
      if (!res.ok) return res.code === 'TURN_NOT_FOUND' ? Promise.reject(fromWorker(res)) : readFailed(id, project, res, b);
      const { ok: _, ...changes } = res;
      return changes;
    },
    async diff(id: string, file?: string, range: Range = {}, caller: Caller = {}) {
      const b = bound('the diff', caller);
      const { task, project, worktree } = await worktreeOf(id);
      const input = { worktree, base: task.base, task: id, ...range, scratch, ...(file !== undefined ? { path: file } : {}) };
      const res = await read(project.id, b, () => pool.run('taskDiff', input, b));
      if (!res.ok) return res.code === 'TURN_NOT_FOUND' ? Promise.reject(fromWorker(res)) : readFailed(id, project, res, b);
      return res;
    },
    async commit(id: string, message: string, caller: Caller = {}): Promise<CommitResult> {
      const b = runBound(timeBound("the commit (the repository's hooks included)", 'setup_timeout_s', deps.setupTimeoutS, 'the index is as it was'), 'GIT_TIMEOUT', caller);
      const { worktree } = await worktreeOf(id);
      const res = await deps.perTask.run(
        id,
        async () => {
          await landings.settle(touching(id, worktree));
          return pool.run('commitTask', { worktree, message, scratch }, b);
        },
        { signal: b.signal },
      );
      if (!res.ok) throw fromWorker(res);
      return { commit: res.commit, files: res.files };
    },
    async rebase(id: string, caller: Caller = {}): Promise<Task> {
      const b = bound('the rebase', caller);
      const { task, project, worktree } = await worktreeOf(id);
      const res = await deps.perTask.run(
        id,
        async () => {
          await landings.settle(touching(id, worktree));
          const file = deps.landingJournal.fileFor(id, 'rebase');
          const rebase = () => pool.run('rebaseTask', { worktree, base: task.base, intent: { file, task: id, repo: project.path } }, b);
          // A CONFLICT is answered once git aborted the rebase: the branch is as it was.
          return landings.run(file, rebase, (r) => r.ok || r.code === 'CONFLICT');
        },
        { signal: b.signal },
      );
      if (!res.ok) throw fromWorker(res);
      return deps.read.get(id);
    },
    async merge(id: string, opts: MergeBody, caller: Caller = {}): Promise<MergeResult> {
      const b = bound('the merge', caller);
      const { task, project, worktree } = await worktreeOf(id);
      const strategy = opts.strategy ?? 'merge';
      const file = deps.landingJournal.fileFor(id, 'merge');
      const input = { repo: project.path, worktree, base: task.base, branch: task.branch, strategy, message: opts.message, title: task.name, intent: { file, task: id } };
      // The task's turn first, then the project's: archive takes them in the same order.
      return deps.perTask.run(
        id,
        () =>
          deps.perProject.run(
            project.id,
            async () => {
              await landings.settle((i) => i.repo === project.path);
              // The task is marked merged before the intent is void: a kill in between finishes it at start.
              const res = await landings.run(file, async () => {
                const merged = await pool.run('mergeTask', input, b);
                if (merged.ok) await deps.tasks.markMerged(id, merged.commit);
                return merged;
              });
              if (!res.ok) throw fromWorker(res);
              return { base: res.base, commit: res.commit, strategy: res.strategy };
            },
            { signal: b.signal },
          ),
        { signal: b.signal },
      );
    },
    // A restack (DESIGN §17): the task stacked on `parent`'s branch, which has merged, rebased
    // onto parent's base with the rebase above (its commits only, not the parent's), and its base
    // made that base. Not while an agent session of it runs ('running': it is done when that ends).
    // A conflict leaves the branch as it was; both are told as a task.status event with `restack`.
    async restack(id: string, parent: { id: string; branch: string; base: string }): Promise<'running' | 'settled' | Result<{ head: string; onto: string }>> {
      const { project, worktree } = await worktreeOf(id);
      const of: RestackOf = { task_id: parent.id, branch: parent.branch, onto: parent.base };
      return deps.gate.admit(id, () =>
        deps.perTask.run(id, async () => {
          if ((await deps.runningAgent(id)) !== null) return 'running' as const;
          await landings.settle(touching(id, worktree));
          // What was put right may have been this restack, stopped after its rebase ended, and
          // recorded now ('settled'): a second rebase would replay the base's commits on the task.
          const now = await deps.tasks.get(id);
          if (now === null || (now.base !== parent.branch && now.base !== `refs/heads/${parent.branch}`)) return 'settled' as const;
          const file = deps.landingJournal.fileFor(id, 'rebase');
          const input = { worktree, base: parent.base, upstream: parent.branch, intent: { file, task: id, repo: project.path, restack: of } };
          // The row is written before the intent is void: a stop in between is recorded at start.
          const rebase = async () => {
            const r = await pool.run('rebaseTask', input, bound('the restack', {}));
            if (r.ok) await recordRestack(deps.tasks, id, of, r.onto, r.head);
            return r;
          };
          const res = await landings.run(file, rebase, (r) => r.ok || r.code === 'CONFLICT');
          if (res.ok) {
            deps.log.info({ task: id, onto: parent.base, after: parent.id }, 'task restacked onto its merged parent\'s base');
          } else {
            await deps.tasks.recordRestackFailed(id, { restack: { status: 'failed', ...of, code: res.code, message: res.message, files: res.files ?? [] } });
            deps.log.warn({ task: id, code: res.code, message: res.message }, 'restack failed; the branch is as it was');
          }
          return res;
        }),
      );
    },
    // The task's turns (DESIGN §17), oldest first: read from its repository's refs, which every
    // worktree shares; an archived task has none left.
    async turns(id: string, caller: Caller = {}): Promise<TurnList> {
      const b = bound('listing the turns', caller);
      const task = await deps.read.get(id);
      const project = await deps.getProject(task.project_id);
      const res = await read(project.id, b, () => pool.run('listTurns', { worktree: project.path, task: id }, b));
      if (!res.ok) throw fromWorker(res);
      return res.turns;
    },
    // At the end of an agent session: the worktree's state as the task's next turn. Null, and
    // nothing recorded, when the task has no worktree here (archived, being archived, missing,
    // another host's); a failure is logged, never the session's.
    async checkpoint(id: string, sessionId: string): Promise<TurnRef | null> {
      try {
        const task = await deps.read.get(id);
        if (task.status === 'archived' || task.status === 'setting_up' || task.worktree_missing || deps.gate.isClosing(id) || !deps.read.isLocal(task)) return null;
        const project = await deps.getProject(task.project_id);
        const worktree = path.join(project.path, task.worktree_path);
        const res = await turnsOf.run(id, () => recording.run(() => pool.run('recordTurn', { worktree, task: id, scratch, session_id: sessionId }, bound('recording the turn', {}))));
        if (!res.ok) {
          deps.log.warn({ task: id, session: sessionId, code: res.code, message: res.message }, 'recording the turn failed');
          return null;
        }
        return { n: res.turn.n, commit: res.turn.commit };
      } catch (err) {
        deps.log.warn({ err, task: id, session: sessionId }, 'recording the turn failed');
        return null;
      }
    },
    // POST /api/tasks/:id/restore: no session of the task starts meanwhile (the gate), and no
    // commit, rebase or merge writes its worktree (its turn).
    async restore(id: string, turn: number, caller: Caller = {}): Promise<RestoreResult> {
      const b = bound('the restore', caller);
      const { worktree } = await worktreeOf(id);
      const res = await deps.gate.admit(id, () =>
        deps.perTask.run(
          id,
          async () => {
            const running = await deps.runningAgent(id);
            if (running !== null) throw new GroveError('SESSION_RUNNING', `session ${running} of this task has not ended; restore once it has, or stop it first (DELETE /api/sessions/${running})`);
            await landings.settle(touching(id, worktree));
            return pool.run('restoreTurn', { worktree, task: id, scratch, turn }, b);
          },
          { signal: b.signal },
        ),
      );
      if (!res.ok) throw fromWorker(res);
      await deps.tasks.recordRestored(id);
      return { saved: res.saved, restored: res.restored };
    },
    async push(id: string, remote?: string, caller: Caller = {}): Promise<PushResult> {
      const b = bound('git push', caller);
      const { task, project } = await worktreeOf(id);
      const res = await pool.run('pushTask', { repo: project.path, branch: task.branch, remote }, b);
      if (!res.ok) throw fromWorker(res);
      return { remote: res.remote, branch: res.branch };
    },
    // Every live task with its worktree, against the others and against its base.
    async conflicts(projectId: string, caller: Caller = {}): Promise<ConflictList> {
      const b = bound('the conflict check', caller);
      const project = await deps.getProject(projectId);
      const check = async () => {
        const live = (await deps.read.list(projectId)).filter((t) => (t.status === 'ready' || t.status === 'setup_failed') && !t.worktree_missing);
        const tasks = live.map((t) => ({ id: t.id, worktree: path.join(project.path, t.worktree_path), base: t.base }));
        return read(project.id, b, () => pool.run('projectConflicts', { repo: project.path, tasks, scratch }, b));
      };
      let res = await check();
      if (!res.ok && res.code !== 'GIT_TIMEOUT' && res.code !== 'UNAVAILABLE') {
        // An archive may have removed a worktree under the check: once that settles, once more.
        await deps.perProject.run(project.id, async () => {}, { signal: b.signal });
        res = await check();
      }
      if (!res.ok) throw fromWorker(res);
      return res.conflicts;
    },
  };
}

export type Review = ReturnType<typeof createReview>;
