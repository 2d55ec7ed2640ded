import type { Project } from '../../schemas/project.ts';
import type { TaskSetup } from '../../schemas/task.ts';
import { createBaseWatch } from '../projects/base-watch.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';
import { once } from '../runtime/once.ts';
import type { Logger } from '../runtime/log.ts';
import type { SetupLogTable } from '../store/setup-log.ts';
import type { TasksTable } from '../store/tasks.ts';
import { createTaskArchiver } from './archive.ts';
import { createTaskCreator, createTaskMaker } from './create.ts';
import type { TaskGate } from './gate.ts';
import type { Journal } from '../journal/creation.ts';
import type { Pool } from './threads.ts';
import type { PortAllocator } from './ports.ts';
import type { TaskReader } from './read.ts';
import { recoverTasks } from './recover.ts';
import { createSetupRunner } from './setup-run.ts';
import { createWarmPool } from './warm.ts';

export interface TaskServiceDeps {
  /** kills every live session of a task (archiving) */
  killSessions: (taskId: string) => Promise<void>;
  /** shared with the sessions: an archive closes it before it kills anything */
  gate: TaskGate;
  tasks: TasksTable;
  read: TaskReader;
  setupLog: SetupLogTable;
  /** the log of archives' teardowns */
  teardownLog: SetupLogTable;
  getProject: (id: string) => Promise<Project>;
  /** the projects on this host's disk: the warm pool keeps slots for those */
  localProjects: () => Promise<Project[]>;
  pool: Pool;
  ports: PortAllocator;
  configs: ProjectConfigs;
  setupTimeoutS: number;
  /** the bound of review and landing git */
  gitTimeoutS: number;
  /** a task that became ready: its services marked autostart start (DESIGN §10) */
  onReady: (taskId: string) => Promise<void>;
  /** creation intents, so a creation cut short by a kill is undone on the next start */
  journal: Journal;
  log: Logger;
}

// Tasks as the routes and the daemon use them: the verbs (create, archive, recover, setup
// runs) wired together, with reads of tasks and their setup logs.
export function createTaskService(deps: TaskServiceDeps) {
  const { tasks, read, setupLog, teardownLog, pool, getProject, ports, configs, journal, killSessions, log } = deps;
  // Parallel `git worktree add`/`remove` on one repository race on its locks: one at a time per project.
  const perProject = createKeyedMutex();
  // A commit or rebase (hooks, filters) writes only its task's branch and worktree: it takes the
  // task's turn, never the project's, so that it cannot hold up the project's creations.
  const perTask = createKeyedMutex();
  const setups = createSetupRunner({ pool, tasks, setupLog, setupTimeoutS: deps.setupTimeoutS, onReady: deps.onReady, log });
  const maker = createTaskMaker({ tasks, pool, ports, journal, setupTimeoutS: deps.setupTimeoutS, setupLog });
  const bases = createBaseWatch({ log });
  const warm = createWarmPool({ tasks, maker, setups, pool, configs, bases, getProject, localProjects: deps.localProjects, perProject, gitTimeoutS: deps.gitTimeoutS, log });
  const create = createTaskCreator({ tasks, read, getProject, pool, ports, configs, journal, perProject, setup: setups, setupTimeoutS: deps.setupTimeoutS, setupLog, onReady: deps.onReady, log, maker, claim: warm.claim });
  const teardowns = createSetupRunner({ pool, tasks, setupLog: teardownLog, setupTimeoutS: deps.setupTimeoutS, onReady: deps.onReady, log });
  const archive = createTaskArchiver({ tasks, read, getProject, configs, pool, killSessions, gate: deps.gate, perProject, perTask, setup: setups, teardown: teardowns, gitTimeoutS: deps.gitTimeoutS, log });

  return {
    // Changes (task id) as a setup's progress is stored and at its end: what setup streams wait on.
    setupProgress: setups.progress,
    get: read.get,
    list: read.list,
    setupLinesAfter: (id: string, after: number) => setupLog.linesWithCommand(id, after),
    setupCommands: (id: string) => setupLog.commands(id),
    create,
    warm,
    async setup(id: string): Promise<TaskSetup> {
      const task = await read.get(id);
      const [commands, lines] = await Promise.all([setupLog.commands(id), setupLog.lines(id)]);
      return { status: task.status, commands, lines };
    },
    // The teardown of the task's archive, in the shape of its setup (DESIGN §10).
    async teardown(id: string): Promise<TaskSetup> {
      const task = await read.get(id);
      const [commands, lines] = await Promise.all([teardownLog.commands(id), teardownLog.lines(id)]);
      return { status: task.status, commands, lines };
    },
    archive,
    // The turns a project's and a task's git take (landing takes them too).
    perProject,
    perTask,
    recover: (hostId: string) => recoverTasks({ journal, tasks, setupLog, teardownLog, pool, finishArchive: (id) => archive(id, true, { teardown: false }), gitTimeoutS: deps.gitTimeoutS, hostId, log }),
    // Stops running setups and teardowns (their process groups are killed) and waits for them to be recorded.
    close: once(async () => {
      await Promise.all([warm.close(), setups.close(), teardowns.close()]);
      await bases.close();
    }),
  };
}

export type TaskService = ReturnType<typeof createTaskService>;
