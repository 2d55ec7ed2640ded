import path from 'node:path';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import type { KeyedMutex } from '../runtime/keyed-mutex.ts';
import type { TasksTable } from '../store/tasks.ts';
import type { MergeStrategy } from '../../workers/review/merge.ts';
import type { Fail } from '../../workers/result.ts';
import { fromWorker, type Pool } from './pool.ts';
import type { TaskReader } from './read.ts';

export interface ReviewDeps {
  tasks: TasksTable;
  read: TaskReader;
  getProject: (id: string) => Promise<Project>;
  pool: Pick<Pool, 'taskChanges' | 'taskDiff' | 'commitTask' | 'rebaseTask' | 'mergeTask' | 'pushTask' | 'projectConflicts'>;
  /** git that writes refs takes turns per project, with worktree creation and removal */
  perProject: KeyedMutex;
  /** where reads keep their index copies and objects, and a commit its index's backup */
  scratch: string;
}

// Review and landing of a task's work (DESIGN §9). All git runs in the pool; what writes refs
// takes turns per project.
export function createReview(deps: ReviewDeps) {
  const { pool, scratch } = deps;

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
  async function readFailed(id: string, project: Project, failure: Fail): Promise<never> {
    await deps.perProject.run(project.id, async () => {});
    await worktreeOf(id);
    throw fromWorker(failure);
  }

  return {
    async changes(id: string) {
      const { task, project, worktree } = await worktreeOf(id);
      const res = await pool.taskChanges({ worktree, base: task.base, scratch });
      if (!res.ok) return readFailed(id, project, res);
      const { ok: _, ...changes } = res;
      return changes;
    },
    async diff(id: string, file?: string) {
      const { task, project, worktree } = await worktreeOf(id);
      const res = await pool.taskDiff({ worktree, base: task.base, scratch, ...(file !== undefined ? { path: file } : {}) });
      if (!res.ok) return readFailed(id, project, res);
      return res;
    },
    async commit(id: string, message: string) {
      const { project, worktree } = await worktreeOf(id);
      const res = await deps.perProject.run(project.id, () => pool.commitTask({ worktree, message, scratch }));
      if (!res.ok) throw fromWorker(res);
      return { commit: res.commit, files: res.files };
    },
    async rebase(id: string): Promise<Task> {
      const { task, project, worktree } = await worktreeOf(id);
      const res = await deps.perProject.run(project.id, () => pool.rebaseTask({ worktree, base: task.base }));
      if (!res.ok) throw fromWorker(res);
      return deps.read.get(id);
    },
    async merge(id: string, opts: { strategy?: MergeStrategy | undefined; message?: string | undefined }) {
      const { task, project, worktree } = await worktreeOf(id);
      const strategy = opts.strategy ?? 'merge';
      const input = { repo: project.path, worktree, base: task.base, branch: task.branch, strategy, message: opts.message, title: task.name };
      return deps.perProject.run(project.id, async () => {
        const res = await pool.mergeTask(input);
        if (!res.ok) throw fromWorker(res);
        await deps.tasks.markMerged(id, res.commit);
        return { base: res.base, commit: res.commit, strategy: res.strategy };
      });
    },
    async push(id: string, remote?: string) {
      const { task, project } = await worktreeOf(id);
      const res = await pool.pushTask({ repo: project.path, branch: task.branch, remote });
      if (!res.ok) throw fromWorker(res);
      return { remote: res.remote, branch: res.branch };
    },
    // Every live task with its worktree, against the others and against its base.
    async conflicts(projectId: string) {
      const project = await deps.getProject(projectId);
      const check = async () => {
        const live = (await deps.read.list(projectId)).filter((t) => (t.status === 'ready' || t.status === 'setup_failed') && !t.worktree_missing);
        const tasks = live.map((t) => ({ id: t.id, worktree: path.join(project.path, t.worktree_path), base: t.base }));
        return pool.projectConflicts({ repo: project.path, tasks, scratch });
      };
      let res = await check();
      if (!res.ok) {
        // An archive may have removed a worktree under the check: once that settles, once more.
        await deps.perProject.run(project.id, async () => {});
        res = await check();
      }
      if (!res.ok) throw fromWorker(res);
      return res.conflicts;
    },
  };
}

export type Review = ReturnType<typeof createReview>;
