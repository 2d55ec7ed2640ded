import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import type { CreateTaskInput, Task } from '../../schemas/task.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import type { KeyedMutex } from '../runtime/keyed-mutex.ts';
import type { Logger } from '../runtime/log.ts';
import type { SetupLogTable } from '../store/setup-log.ts';
import type { TasksTable } from '../store/tasks.ts';
import type { CopyReport } from '../../workers/worktree/copy.ts';
import type { Journal } from '../journal/creation.ts';
import { fromWorker, timeBound, type Pool } from './threads.ts';
import type { PortAllocator } from './ports.ts';
import type { TaskReader } from './read.ts';
import type { SetupRunner } from './setup-run.ts';
import { slugify } from './slug.ts';

export interface TaskCreatorDeps {
  tasks: TasksTable;
  read: TaskReader;
  getProject: (id: string) => Promise<Project>;
  pool: Pick<Pool, 'run'>;
  /** the setup log, where the copied files are reported */
  setupLog: SetupLogTable;
  ports: PortAllocator;
  configs: ProjectConfigs;
  /** creation intents, so a creation cut short by a kill is undone on the next start */
  journal: Journal;
  /** shared with archiving: git worktree changes on one repository take turns */
  perProject: KeyedMutex;
  setup: SetupRunner;
  /** setup_timeout_s: copying the files `copy` names gets as long as setup does */
  setupTimeoutS: number;
  /** a task ready at once (no setup commands) starts its autostart services */
  onReady: (taskId: string) => Promise<void>;
  log: Logger;
}

export type TaskMakerDeps = Pick<TaskCreatorDeps, 'tasks' | 'pool' | 'setupLog' | 'ports' | 'journal' | 'setupTimeoutS'>;

// The branch and worktree, the copied files and the row with its ports: what a task and a warm
// pool's slot (`slotConfig`, the config it is made with) are both made of.
export function createTaskMaker(deps: TaskMakerDeps) {
  const { tasks, pool, journal } = deps;

  // Makes the worktree (with the untracked files `copy` names) and stores the task; runs inside
  // the project's turn.
  async function make(id: string, project: Project, config: ProjectConfig, input: Pick<CreateTaskInput, 'name' | 'branch' | 'base' | 'issue'>, status: 'setting_up' | 'ready', slotConfig?: string): Promise<CopyReport> {
    const made = await pool.run('createWorktree', {
      repo: project.path,
      slug: slugify(input.name),
      ...(input.branch !== undefined ? { branch: input.branch } : {}),
      ...(input.base !== undefined ? { base: input.base } : {}),
      taken: await tasks.liveWorktreePaths(project.id),
      intent: { id, file: journal.fileFor(id) },
      // Its checkout runs the repository's filters (LFS downloads too): part of preparing the task.
      timeout: timeBound('creating the worktree (git worktree add)', 'setup_timeout_s', deps.setupTimeoutS, 'nothing was made'),
    });
    if (!made.ok) throw fromWorker(made);
    try {
      const copied = await pool.run('copyIncluded', { repo: project.path, worktree: path.join(project.path, made.worktree_path), patterns: config.copy ?? [], timeoutMs: deps.setupTimeoutS * 1000 });
      if (!copied.ok) throw fromWorker(copied);
      // Ports are picked and their leases stored with the row, so two creations never share one.
      await deps.ports.allocate(config.ports ?? [], (ports) =>
        tasks.insert(
          {
            id,
            project_id: project.id,
            name: input.name,
            branch: made.branch,
            worktree_path: made.worktree_path,
            base: made.base,
            base_commit: made.base_commit,
            status,
            issue: input.issue ?? null,
          },
          ports,
          slotConfig,
        ),
      );
      return copied;
    } catch (err) {
      // No row: take the worktree and the new branch back too.
      await pool.run('removeWorktree', {
        repo: project.path,
        worktree_path: made.worktree_path,
        force: true,
        deleteBranch: made.branch,
        deleteBranchAt: made.base_commit,
        timeout: timeBound('taking back the worktree of a failed creation', 'setup_timeout_s', deps.setupTimeoutS),
      });
      throw err;
    } finally {
      journal.done(id);
    }
  }

  // What `copy` copied and skipped, as the first lines of the setup log (command index -1:
  // before every command): the first paths of each, then counts, so the log stays short.
  async function reportCopies(id: string, r: CopyReport): Promise<void> {
    const at = new Date().toISOString();
    const out = (text: string) => ({ stream: 'stdout' as const, text: `grove: ${text}`, at });
    const err = (text: string) => ({ stream: 'stderr' as const, text: `grove: ${text}`, at });
    const lines = [
      ...r.copied_paths.map((p) => out(`copied ${p}`)),
      ...(r.copied > r.copied_paths.length ? [out(`... and ${r.copied - r.copied_paths.length} more copied (${r.copied} files, ${r.bytes} bytes in all)`)] : []),
      ...r.skipped.map((s) => err(`not copied: ${s.path} (${s.why})`)),
      ...(r.stopped !== null ? [err(`copy stopped: ${r.stopped}`)] : []),
      ...(r.not_copied > r.skipped.length ? [err(`... and ${r.not_copied - r.skipped.length} more not copied (${r.not_copied} in all)`)] : []),
    ];
    await deps.setupLog.appendLines(id, 1, lines, -1);
  }

  return { make, reportCopies };
}

export type TaskMaker = ReturnType<typeof createTaskMaker>;

// POST /api/tasks: a ready slot of the warm pool when there is one (`claim`), else the branch
// and worktree, then the row with its ports, then setup (waited for unless `wait: false`). A
// creation that fails part-way leaves nothing behind.
export function createTaskCreator(deps: TaskCreatorDeps & { maker?: TaskMaker; claim?: (project: Project, config: ProjectConfig, input: CreateTaskInput) => Promise<string | null> }) {
  const { log } = deps;
  const maker = deps.maker ?? createTaskMaker(deps);
  return async function create(input: CreateTaskInput): Promise<{ status: 201 | 202; task: Task }> {
    const project = await deps.getProject(input.project_id);
    const config = deps.configs.load(project.path);
    const pooled = config.pool && deps.claim ? await deps.claim(project, config, input) : null;
    if (pooled !== null) {
      const task = await deps.read.get(pooled);
      log.info({ task: pooled, project: project.id, branch: task.branch, ports: task.ports }, 'task created from the warm pool');
      await deps.onReady(pooled);
      return { status: input.wait === false ? 202 : 201, task };
    }
    const id = randomUUID();
    const needsSetup = (config.setup ?? []).length > 0;
    log.debug({ task: id, project: project.id }, "a cold creation waits for the project's turn");
    const copied = await deps.perProject.run(project.id, () => maker.make(id, project, config, input, needsSetup ? 'setting_up' : 'ready'));
    await maker.reportCopies(id, copied);

    const task = await deps.read.get(id);
    log.info({ task: id, project: project.id, branch: task.branch, ports: task.ports }, 'task created');
    if (!needsSetup) {
      // Its autostart services are started before the answer, as after a setup.
      await deps.onReady(id);
      return { status: input.wait === false ? 202 : 201, task };
    }
    const setupDone = deps.setup.start(project, task, config);
    if (input.wait === false) return { status: 202, task };
    await setupDone;
    return { status: 201, task: await deps.read.get(id) };
  };
}
