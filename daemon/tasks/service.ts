import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import type { CreateTask, Task, TaskSetup } from '../../schemas/task.ts';
import type { Fail } from '../../workers/result.ts';
import type { SetupMessage } from '../../workers/setup.ts';
import { GroveError } from '../errors.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';
import type { Logger } from '../runtime/log.ts';
import type { Pool } from './pool.ts';
import type { PortAllocator } from './ports.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import { slugify } from './slug.ts';
import type { SetupLogTable } from '../store/setup-log.ts';
import type { TasksTable } from '../store/tasks.ts';
import type { TaskReader } from './read.ts';
import type { Journal } from './journal.ts';
import { isSameProcessAlive } from '../proc/stat.ts';
import { groupMembers } from '../proc/group.ts';
import { GRACE_MS, terminate } from '../proc/terminate.ts';
import { taskEnv } from './env.ts';

// Stops a setup command's process group that outlived a killed daemon. The group is ours if
// its leader still has the recorded start time, or if the leader is gone but members remain
// (the kernel does not hand out a pid while a group of that id exists).
async function stopOrphanGroup(pid: number | null, pidStart: string | null): Promise<void> {
  if (!pid) return;
  const leaderOurs = pidStart !== null && isSameProcessAlive(pid, pidStart);
  const leaderGone = !leaderOurs && !existsSync(`/proc/${pid}`) && process.platform === 'linux';
  if (!leaderOurs && !(leaderGone && groupMembers(pid).length > 0)) return;
  await terminate(pid, { graceMs: GRACE_MS.setup });
}

export function fromWorker(f: Fail): GroveError {
  return new GroveError(f.code, f.message, f.path ? { errors: [{ path: f.path, message: f.message }] } : {});
}

interface Running {
  cancel(): void;
  done: Promise<void>;
}

export interface TaskServiceDeps {
  /** kills every live session of a task (archiving) */
  killSessions: (taskId: string) => Promise<void>;
  tasks: TasksTable;
  read: TaskReader;
  setupLog: SetupLogTable;
  getProject: (id: string) => Promise<Project>;
  pool: Pool;
  ports: PortAllocator;
  configs: ProjectConfigs;
  setupTimeoutS: number;
  /** creation intents, so a creation cut short by a kill is undone on the next start */
  journal: Journal;
  log: Logger;
}

// Creating, listing and archiving tasks: worktrees made one at a time per project, setup run
// in the pool with its output stored as it comes.
export function createTaskService(deps: TaskServiceDeps) {
  const { tasks, setupLog, pool, log } = deps;
  // Parallel `git worktree add` on one repository races on its locks: one at a time per project.
  const perProject = createKeyedMutex();
  const running = new Map<string, Running>();
  // 'setup:<task id>' whenever setup progress was stored or setup ended.
  const events = new EventEmitter();
  events.setMaxListeners(0);

  const { get, list } = deps.read;

  function startSetup(project: Project, task: Task, config: ProjectConfig): Running {
    const { port1, port2 } = new MessageChannel();
    let seq = 0;
    let writes: Promise<void> = Promise.resolve();
    const handle = async (m: SetupMessage) => {
      if (m.type === 'spawned') await setupLog.commandSpawned(task.id, m.idx, m.pid, m.pid_start);
      else if (m.type === 'start') {
        await setupLog.commandStarted(task.id, m.idx, m.command, m.at);
        log.debug({ task: task.id, idx: m.idx, command: m.command }, 'setup command started');
      }
      else if (m.type === 'lines') {
        await setupLog.appendLines(task.id, seq + 1, m.lines, m.idx);
        seq += m.lines.length;
      } else if (m.type === 'end') await setupLog.commandEnded(task.id, m.idx, { ...m, ended_at: m.at });
      events.emit(`setup:${task.id}`);
    };
    // The worker's last message is `done`; messages on one port arrive in order, so after it
    // every line has arrived (a port's 'close' event does not reliably cross threads).
    let sawDone: () => void = () => {};
    const lastMessage = new Promise<void>((resolve) => (sawDone = resolve));
    port1.on('message', (m: SetupMessage) => {
      if (m.type === 'done') return sawDone();
      writes = writes.then(() => handle(m)).catch((err: unknown) => log.error({ err, task: task.id }, 'storing setup output failed'));
    });

    const done = (async () => {
      let ok = false;
      try {
        const res = await pool.runSetup({
          cwd: path.join(project.path, task.worktree_path),
          commands: config.setup ?? [],
          env: taskEnv(project, task, config),
          timeoutMs: deps.setupTimeoutS * 1000,
          port: port2,
        });
        ok = res.ok && !res.failed;
      } catch (err) {
        log.error({ err, task: task.id }, 'setup worker failed');
        sawDone();
      }
      await lastMessage;
      port1.close();
      await writes;
      await tasks.setStatus(task.id, ok ? 'ready' : 'setup_failed', 'setting_up');
      events.emit(`setup:${task.id}`);
      log.info({ task: task.id, status: ok ? 'ready' : 'setup_failed' }, 'setup finished');
    })().finally(() => running.delete(task.id));
    const run: Running = { cancel: () => port1.postMessage({ type: 'cancel' }), done };
    running.set(task.id, run);
    return run;
  }

  return {
    events,
    get,
    list,
    setupLinesAfter: (id: string, after: number) => setupLog.linesWithCommand(id, after),
    setupCommands: (id: string) => setupLog.commands(id),

    async create(input: CreateTask): Promise<{ status: 201 | 202; task: Task }> {
      const project = await deps.getProject(input.project_id);
      const config = deps.configs.load(project.path);
      const id = randomUUID();
      const needsSetup = (config.setup ?? []).length > 0;

      await perProject.run(project.id, async () => {
        const made = await pool.createWorktree({
          repo: project.path,
          slug: slugify(input.name),
          ...(input.branch !== undefined ? { branch: input.branch } : {}),
          ...(input.base !== undefined ? { base: input.base } : {}),
          taken: await tasks.liveWorktreePaths(project.id),
          intent: { id, file: deps.journal.fileFor(id) },
        });
        if (!made.ok) throw fromWorker(made);
        try {
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
                status: needsSetup ? 'setting_up' : 'ready',
              },
              ports,
            ),
          );
        } catch (err) {
          // No row: take the worktree and the new branch back too.
          await pool.removeWorktree({
            repo: project.path,
            worktree_path: made.worktree_path,
            force: true,
            deleteBranch: made.branch,
            deleteBranchAt: made.base_commit,
          });
          throw err;
        } finally {
          deps.journal.done(id);
        }
      });

      const task = await get(id);
      log.info({ task: id, project: project.id, branch: task.branch, ports: task.ports }, 'task created');
      if (!needsSetup) return { status: input.wait === false ? 202 : 201, task };
      const run = startSetup(project, task, config);
      if (input.wait === false) return { status: 202, task };
      await run.done;
      return { status: 201, task: await get(id) };
    },

    async setup(id: string): Promise<TaskSetup> {
      const task = await get(id);
      const [commands, lines] = await Promise.all([setupLog.commands(id), setupLog.lines(id)]);
      return { status: task.status, commands, lines };
    },

    async archive(id: string, force: boolean): Promise<Task> {
      const task = await get(id);
      if (task.status === 'archived') return task;
      const project = await deps.getProject(task.project_id);
      const run = running.get(id);
      if (run) {
        run.cancel();
        await run.done;
      }
      await deps.killSessions(id);
      await perProject.run(project.id, async () => {
        const res = await pool.removeWorktree({ repo: project.path, worktree_path: task.worktree_path, force });
        if (!res.ok) throw fromWorker(res);
        if (res.removed !== 'worktree') log.warn({ task: id, removed: res.removed }, 'worktree folder was not a live worktree; registration pruned');
        await tasks.archive(id);
      });
      log.info({ task: id }, 'task archived');
      return get(id);
    },

    // What a daemon killed mid-work left behind: creations without a row are undone, setups
    // that can no longer finish are stopped (their process groups too) and marked failed.
    async recover(): Promise<void> {
      for (const { id, intent } of deps.journal.pending()) {
        if (intent && !(await tasks.get(id))) {
          const res = await pool.removeWorktree({
            repo: intent.repo,
            worktree_path: intent.worktree_path,
            force: true,
            deleteBranch: intent.branch,
            deleteBranchAt: intent.base_commit,
          });
          if (!res.ok) log.warn({ task: id, intent, err: res.message }, 'undoing an interrupted task creation failed');
          else log.warn({ task: id, branch: intent.branch, worktree: intent.worktree_path }, 'undid a task creation interrupted by a daemon stop');
        }
        deps.journal.done(id);
      }
      // The common case, a clean stop, costs one read instead of three writes at every start.
      if (!(await tasks.anySettingUp())) return;
      const orphans = await setupLog.endInterrupted();
      await Promise.all(orphans.map((o) => stopOrphanGroup(o.pid, o.pid_start)));
      const ids = await tasks.failInterruptedSetups();
      if (ids.length > 0) log.warn({ tasks: ids, stopped: orphans.filter((o) => o.pid).length }, 'setup was interrupted by a daemon stop; marked setup_failed');
    },

    // Stops running setups (their process groups are killed) and waits for them to be recorded.
    async close(): Promise<void> {
      const all = [...running.values()];
      for (const r of all) r.cancel();
      await Promise.allSettled(all.map((r) => r.done));
    },
  };
}

export type TaskService = ReturnType<typeof createTaskService>;
