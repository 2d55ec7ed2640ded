import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import type { KeyedMutex } from '../runtime/keyed-mutex.ts';
import type { Logger } from '../runtime/log.ts';
import type { TasksTable } from '../store/tasks.ts';
import { fromWorker, type Pool } from './pool.ts';
import type { TaskReader } from './read.ts';
import type { SetupRunner } from './setup-run.ts';

export interface TaskArchiverDeps {
  tasks: TasksTable;
  read: TaskReader;
  getProject: (id: string) => Promise<Project>;
  pool: Pick<Pool, 'removeWorktree'>;
  /** kills every live session of a task */
  killSessions: (taskId: string) => Promise<void>;
  /** shared with creation: git worktree changes on one repository take turns */
  perProject: KeyedMutex;
  setup: SetupRunner;
  log: Logger;
}

// DELETE /api/tasks/:id: setup stopped, sessions killed, worktree removed (refused when dirty
// unless forced), then the task archived with its ports released; the branch stays.
export function createTaskArchiver(deps: TaskArchiverDeps) {
  const { tasks, pool, log } = deps;
  return async function archive(id: string, force: boolean): Promise<Task> {
    const task = await deps.read.get(id);
    if (task.status === 'archived') return task;
    const project = await deps.getProject(task.project_id);
    await deps.setup.stop(id);
    await deps.killSessions(id);
    await deps.perProject.run(project.id, async () => {
      const res = await pool.removeWorktree({ repo: project.path, worktree_path: task.worktree_path, force });
      if (!res.ok) throw fromWorker(res);
      if (res.removed !== 'worktree') log.warn({ task: id, removed: res.removed }, 'worktree folder was not a live worktree; registration pruned');
      await tasks.archive(id);
    });
    log.info({ task: id }, 'task archived');
    return deps.read.get(id);
  };
}
