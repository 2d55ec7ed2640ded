import path from 'node:path';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import type { KeyedMutex } from '../runtime/keyed-mutex.ts';
import { fromWorker, type Pool } from './pool.ts';
import type { TaskReader } from './read.ts';

export interface ReviewDeps {
  read: TaskReader;
  getProject: (id: string) => Promise<Project>;
  pool: Pick<Pool, 'taskChanges' | 'taskDiff' | 'commitTask'>;
  /** git that writes refs takes turns per project, with worktree creation and removal */
  perProject: KeyedMutex;
}

// Review of a task's work (DESIGN §9): what changed, the diff, a commit. All git runs in the pool.
export function createReview(deps: ReviewDeps) {
  const { pool } = deps;

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

  return {
    async changes(id: string) {
      const { task, worktree } = await worktreeOf(id);
      const res = await pool.taskChanges({ worktree, base: task.base });
      if (!res.ok) throw fromWorker(res);
      const { ok: _, ...changes } = res;
      return changes;
    },
    async diff(id: string, file?: string) {
      const { task, worktree } = await worktreeOf(id);
      const res = await pool.taskDiff({ worktree, base: task.base, ...(file !== undefined ? { path: file } : {}) });
      if (!res.ok) throw fromWorker(res);
      return res;
    },
    async commit(id: string, message: string) {
      const { project, worktree } = await worktreeOf(id);
      const res = await deps.perProject.run(project.id, () => pool.commitTask({ worktree, message }));
      if (!res.ok) throw fromWorker(res);
      return { commit: res.commit, files: res.files };
    },
  };
}

export type Review = ReturnType<typeof createReview>;
