import path from 'node:path';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import type { KeyedMutex } from '../runtime/keyed-mutex.ts';
import type { Logger } from '../runtime/log.ts';
import type { TasksTable } from '../store/tasks.ts';
import type { TaskGate } from './gate.ts';
import { fromWorker, runBound, timeBound, type Pool } from './threads.ts';
import type { TaskReader } from './read.ts';
import type { SetupRunner } from './setup-run.ts';

export interface TaskArchiverDeps {
  tasks: TasksTable;
  read: TaskReader;
  getProject: (id: string) => Promise<Project>;
  configs: ProjectConfigs;
  pool: Pick<Pool, 'run'>;
  /** kills every live session and service of a task, and cancels its queued ones */
  killSessions: (taskId: string) => Promise<void>;
  /** shared with creation: git worktree changes on one repository take turns */
  perProject: KeyedMutex;
  /** shared with the sessions: closed when an archive begins, so nothing of the task starts after */
  gate: TaskGate;
  /** shared with commit, rebase and merge: the worktree goes only between them */
  perTask: KeyedMutex;
  setup: SetupRunner;
  teardown: SetupRunner;
  /** the bound of its git (user config git_timeout_s): the dirty check and the removal */
  gitTimeoutS: number;
  log: Logger;
}

// DELETE /api/tasks/:id (DESIGN §10): setup stopped, sessions and services killed, teardown run
// in the worktree (its failures recorded, never blocking), the worktree removed (refused when
// dirty unless forced, before anything else is done), then the task archived with its ports
// released; the branch stays. `teardown: false` finishes an archive a stopped daemon left.
// Once it has begun no start of the task is admitted, and its sessions are killed once more
// before the worktree goes.
export function createTaskArchiver(deps: TaskArchiverDeps) {
  const { tasks, pool, log } = deps;

  // An invalid .grove.json must not block an archive: it then has no teardown to run.
  const configOf = (project: Project): ProjectConfig => deps.configs.loadOrNone(project.path, 'archiving runs no teardown');

  async function run(task: Task, project: Project, force: boolean, opts: { teardown?: boolean }): Promise<void> {
    const { id } = task;
    await deps.setup.stop(id);
    await deps.killSessions(id);
    const config = configOf(project);
    const teardown = opts.teardown !== false && (config.teardown ?? []).length > 0 && !task.worktree_missing;
    if (teardown) {
      // Teardown may leave files behind: whether the work was committed is asked before it runs.
      if (!force) {
        const timeout = timeBound('checking the worktree for uncommitted work', 'git_timeout_s', deps.gitTimeoutS, 'nothing was archived');
        const dirty = await pool.run('worktreeDirty', { worktree: path.join(project.path, task.worktree_path), timeout });
        // Any other failure (a broken worktree) must not block its archive; a hung check answers.
        if (!dirty.ok && dirty.code === 'GIT_TIMEOUT') throw fromWorker(dirty);
        if (dirty.ok && dirty.files.length > 0) {
          throw new GroveError('WORKTREE_DIRTY', `the worktree has uncommitted or untracked changes (${dirty.files.slice(0, 10).join(', ')}); use force=true to discard them`);
        }
      }
      await tasks.setArchiving(id, true);
      await deps.teardown.start(project, task, config);
    }
    try {
      // Nothing can have started since the first kill (the gate is closed); this makes sure.
      await deps.killSessions(id);
      // The task's turn, then the project's (merge takes them in the same order).
      await deps.perTask.run(id, () => deps.perProject.run(project.id, async () => {
        const res = await pool.run('removeWorktree', { repo: project.path, worktree_path: task.worktree_path, force: force || teardown || opts.teardown === false, timeout: timeBound('removing the worktree', 'git_timeout_s', deps.gitTimeoutS, 'the task is not archived') });
        if (!res.ok) throw fromWorker(res);
        if (res.removed !== 'worktree') log.warn({ task: id, removed: res.removed }, 'worktree folder was not a live worktree; registration pruned');
        // Its turns go with it (DESIGN §17); refs left by a failure here hold objects, nothing more.
        const turns = await pool.run('dropTurns', { repo: project.path, task: id }, runBound(timeBound("dropping the task's turns", 'git_timeout_s', deps.gitTimeoutS), 'GIT_TIMEOUT'));
        if (!turns.ok) log.warn({ task: id, code: turns.code, message: turns.message }, "dropping the task's turns failed");
        await tasks.archive(id);
      }));
    } catch (err) {
      if (teardown) await tasks.setArchiving(id, false);
      throw err;
    }
  }

  return async function archive(id: string, force: boolean, opts: { teardown?: boolean } = {}): Promise<Task> {
    const task = await deps.read.get(id);
    if (task.status === 'archived') return task;
    const project = await deps.getProject(task.project_id);
    // From here on no session, service or follow-up of the task starts (409 TASK_NOT_READY).
    await deps.gate.close(id);
    try {
      await run(task, project, force, opts);
    } finally {
      deps.gate.end(id);
    }
    log.info({ task: id }, 'task archived');
    return deps.read.get(id);
  };
}

export type TaskArchiver = ReturnType<typeof createTaskArchiver>;
