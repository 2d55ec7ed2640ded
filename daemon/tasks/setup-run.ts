import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import type { SetupMessage } from '../../workers/setup.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { createSignal, type Listen } from '../runtime/signal.ts';
import type { SetupLogTable } from '../store/setup-log.ts';
import type { TasksTable } from '../store/tasks.ts';
import { taskEnv } from './env.ts';
import type { Pool } from './threads.ts';

interface Running {
  cancel(): void;
  done: Promise<void>;
}

export interface SetupRunnerDeps {
  pool: Pick<Pool, 'run'>;
  tasks: TasksTable;
  /** the log of the phase this runner runs: setup, or the teardown of an archive */
  setupLog: SetupLogTable;
  setupTimeoutS: number;
  /** a task whose setup succeeded: its services marked autostart start (DESIGN §10) */
  onReady: (taskId: string) => Promise<void>;
  log: Logger;
}

// Runs a task's setup (or teardown) in the pool and stores its progress as it comes, so a
// follower can read along: `progress` changes (task id) after each store and at the end.
// A setup ends the task `ready` or `setup_failed`; a teardown runs every command and changes nothing.
export function createSetupRunner(deps: SetupRunnerDeps) {
  const { pool, tasks, setupLog, log } = deps;
  const { phase } = setupLog;
  const running = new Map<string, Running>();
  const progress = createSignal<string>();

  // Starts the setup of a task that is `setting_up` (or the teardown of one being archived);
  // resolves once its end is stored. A warm pool's slot runs at low priority, and becomes
  // ready without starting services: those start when it is claimed.
  function start(project: Project, task: Task, config: ProjectConfig, opts: { slot?: boolean } = {}): Promise<void> {
    const { port1, port2 } = new MessageChannel();
    // Lines go on after those already in the log (the report of copied files).
    let seq = 0;
    let writes: Promise<void> = setupLog.lastSeq(task.id).then((n) => void (seq = n));
    // Stores one progress message; called in message order, one at a time.
    const store = async (m: SetupMessage) => {
      if (m.type === 'spawned') {
        await setupLog.commandSpawned(task.id, m.idx, m.pid, m.pid_start);
        log.debug({ task: task.id, idx: m.idx, pid: m.pid }, `${phase} command spawned`);
      } else if (m.type === 'start') {
        await setupLog.commandStarted(task.id, m.idx, m.command, m.at);
        log.debug({ task: task.id, idx: m.idx, command: m.command }, `${phase} command started`);
      } else if (m.type === 'lines') {
        await setupLog.appendLines(task.id, seq + 1, m.lines, m.idx);
        seq += m.lines.length;
      } else if (m.type === 'end') await setupLog.commandEnded(task.id, m.idx, { ...m, ended_at: m.at });
      progress.changed(task.id);
    };
    // The worker's last message is `done`; messages on one port arrive in order, so after it
    // every line has arrived (a port's 'close' event does not reliably cross threads).
    let sawDone: () => void = () => {};
    const lastMessage = new Promise<void>((resolve) => (sawDone = resolve));
    port1.on('message', (m: SetupMessage) => {
      if (m.type === 'done') return sawDone();
      writes = writes.then(() => store(m)).catch((err: unknown) => log.error({ err, task: task.id }, 'storing setup output failed'));
    });

    const done = (async () => {
      let ok = false;
      try {
        const res = await pool.run('runSetup', {
          cwd: path.join(project.path, task.worktree_path),
          commands: (phase === 'setup' ? config.setup : config.teardown) ?? [],
          env: taskEnv(project, task, config),
          timeoutMs: deps.setupTimeoutS * 1000,
          keepGoing: phase === 'teardown',
          nice: opts.slot === true,
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
      if (phase === 'teardown') {
        progress.changed(task.id);
        log.info({ task: task.id, ok }, 'teardown finished');
        return;
      }
      const moved = await tasks.setStatus(task.id, ok ? 'ready' : 'setup_failed', 'setting_up');
      progress.changed(task.id);
      if (ok && moved && !opts.slot) await deps.onReady(task.id);
      log.info({ task: task.id, status: ok ? 'ready' : 'setup_failed' }, 'setup finished');
    })().finally(() => running.delete(task.id));
    running.set(task.id, { cancel: () => port1.postMessage({ type: 'cancel' }), done });
    return done;
  }

  // Cancels a task's running setup (its process group is killed) and waits until it is recorded.
  async function stop(taskId: string): Promise<void> {
    const run = running.get(taskId);
    if (!run) return;
    run.cancel();
    await run.done;
  }

  return {
    progress: progress as Listen<string>,
    start,
    stop,
    // Stops every running setup.
    close: once(async () => {
      const all = [...running.values()];
      for (const r of all) r.cancel();
      await Promise.allSettled(all.map((r) => r.done));
    }),
  };
}

export type SetupRunner = ReturnType<typeof createSetupRunner>;
