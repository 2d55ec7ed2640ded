import type { Logger } from '../runtime/log.ts';
import { stopOrphanGroup } from '../proc/orphan.ts';
import type { SetupLogTable } from '../store/setup-log.ts';
import type { TasksTable } from '../store/tasks.ts';
import type { Journal } from '../journal/creation.ts';
import { timeBound, type Pool } from './threads.ts';

export interface RecoverDeps {
  journal: Journal;
  tasks: TasksTable;
  setupLog: SetupLogTable;
  teardownLog: SetupLogTable;
  pool: Pick<Pool, 'run'>;
  /** completes an archive whose teardown was cut short (without running it again) */
  finishArchive: (taskId: string) => Promise<unknown>;
  /** the bound of undoing a creation's git */
  gitTimeoutS: number;
  /** this host: only its tasks are recovered (another host's are on another disk) */
  hostId: string;
  log: Logger;
}

// At start, what a daemon killed mid-work left: creations without a row are undone; setups that
// can no longer finish are stopped, process groups too, and marked setup_failed; archives stopped
// in their teardown have its processes stopped and end archived.
export async function recoverTasks(deps: RecoverDeps): Promise<void> {
  await undoInterruptedCreations(deps);
  await failInterruptedSetups(deps);
  await finishInterruptedArchives(deps);
}

async function finishInterruptedArchives({ tasks, teardownLog, finishArchive, hostId, log }: RecoverDeps): Promise<void> {
  const ids = await tasks.listArchiving(hostId);
  if (ids.length === 0) return;
  const orphans = await teardownLog.endInterrupted(hostId);
  await Promise.all(orphans.map((o) => stopOrphanGroup(o.pid, o.pid_start)));
  for (const id of ids) {
    await finishArchive(id).then(
      () => log.warn({ task: id }, 'an archive was interrupted by a daemon stop in its teardown; finished'),
      (err: unknown) => log.error({ err, task: id }, 'finishing an interrupted archive failed'),
    );
  }
}

// A journal intent whose task (or warm pool slot) has no row: the branch and worktree it names are taken back.
async function undoInterruptedCreations({ journal, tasks, pool, gitTimeoutS, log }: RecoverDeps): Promise<void> {
  for (const { id, intent } of journal.pending()) {
    if (intent && !(await tasks.getAny(id))) {
      const res = await pool.run('removeWorktree', {
        repo: intent.repo,
        worktree_path: intent.worktree_path,
        force: true,
        deleteBranch: intent.branch,
        deleteBranchAt: intent.base_commit,
        timeout: timeBound('undoing an interrupted task creation', 'git_timeout_s', gitTimeoutS),
      });
      if (!res.ok) log.warn({ task: id, intent, err: res.message }, 'undoing an interrupted task creation failed');
      else log.warn({ task: id, branch: intent.branch, worktree: intent.worktree_path }, 'undid a task creation interrupted by a daemon stop');
    }
    journal.done(id);
  }
}

async function failInterruptedSetups({ tasks, setupLog, hostId, log }: RecoverDeps): Promise<void> {
  // The common case, a clean stop, costs one read instead of three writes at every start.
  if (!(await tasks.anySettingUp(hostId))) return;
  const orphans = await setupLog.endInterrupted(hostId);
  await Promise.all(orphans.map((o) => stopOrphanGroup(o.pid, o.pid_start)));
  const ids = await tasks.failInterruptedSetups(hostId);
  if (ids.length > 0) log.warn({ tasks: ids, stopped: orphans.filter((o) => o.pid).length }, 'setup was interrupted by a daemon stop; marked setup_failed');
}
