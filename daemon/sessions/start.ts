import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { CreateSession, Session } from '../../schemas/session.ts';
import { buildCommand, modeArgs, which } from '../agents/agents.ts';
import { GroveError } from '../errors.ts';
import { isSameProcessAlive, processStartTime } from '../proc/stat.ts';
import { terminate } from '../proc/terminate.ts';
import { publicSession, type SessionRecord } from '../store/sessions.ts';
import { taskEnv } from '../tasks/env.ts';
import type { Live } from './live.ts';
import { findSession } from './record.ts';
import type { SessionServiceDeps } from './service.ts';
import { startWrapped, type SpawnResult } from './spawn.ts';
import { sessionFiles } from './wrapper.ts';

// What the service was given, and the sessions it follows.
export type StartDeps = SessionServiceDeps & { live: Live };

// Starts sessions: all is checked before a process runs, and an unrecorded start leaves nothing.
export function createStart(deps: StartDeps) {
  const { sessions, live, log } = deps;

  // What a new session runs, where and with what environment (DESIGN §5, §8): the agent and the
  // mode named by the body, else by .grove.json, else by the user config (the mode else `edit`).
  async function plan(taskId: string, input: CreateSession) {
    const task = await deps.getTask(taskId);
    if (task.status !== 'ready') throw new GroveError('TASK_NOT_READY', `task ${task.name} is ${task.status}; sessions start on ready tasks`);
    const project = await deps.getProject(task.project_id);
    const config = deps.configs.load(project.path);
    const agent = input.agent ?? config.agent ?? deps.defaultAgent;
    if (agent === undefined) {
      throw new GroveError('AGENT_REQUIRED', 'no agent given, and neither the project (.grove.json "agent") nor the user config ("default_agent") names one');
    }
    const def = deps.agents.get(agent);
    const mode = input.mode ?? config.mode ?? deps.defaultMode ?? 'edit';
    const command = buildCommand(def, { prompt: input.prompt, before: [...modeArgs(def, agent, mode), ...(input.args ?? [])] });
    if (which(command[0]!) === null) {
      throw new GroveError('AGENT_NOT_INSTALLED', `${command[0]} (agent ${agent}) is not on the daemon's PATH`);
    }
    const cwd = path.join(project.path, task.worktree_path);
    if (!existsSync(cwd)) throw new GroveError('TASK_NOT_READY', `the worktree of task ${task.name} is missing (${cwd})`);
    const id = randomUUID();
    const env = { ...taskEnv(project, task, config), ...(def.env ?? {}), GROVE_SESSION_ID: id, GROVE_AGENT: agent };
    return { id, task, agent, mode, command, cwd, env };
  }

  // `running` once the process is confirmed alive, after the 201 has said `starting`.
  function markRunning(id: string, pid: number, pidStart: string | null): void {
    setImmediate(() => {
      if (pidStart === null || !isSameProcessAlive(pid, pidStart)) return;
      void sessions.markRunning(id).then((changed) => {
        if (!changed) return;
        log.debug({ session: id }, 'session running');
        live.events.emit(`progress:${id}`);
      });
    });
  }

  return async function start(taskId: string, input: CreateSession): Promise<Session> {
    const { id, task, agent, mode, command, cwd, env } = await plan(taskId, input);
    const files = sessionFiles(deps.dataDir, id);
    const undo = async (pgid?: number) => {
      if (pgid !== undefined) await terminate(pgid, { graceMs: 0 });
      rmSync(files.dir, { recursive: true, force: true });
    };
    // The wrapper first, held (see wrapper.ts): the row is then written once, with its pid, and
    // only then does the agent run.
    let started: SpawnResult;
    try {
      started = await startWrapped({ files, command, cwd, env });
    } catch (err) {
      await undo();
      throw err;
    }
    const row = { id, task_id: task.id, agent, command, mode, prompt: input.prompt ?? null };
    if (!started.ok) {
      log.error({ err: started.message, session: id }, 'session failed to start');
      await sessions.insert(row);
      await sessions.end(id, 'failed', null);
      return publicSession(await findSession(sessions, id));
    }
    const { pid } = started;
    const pidStart = processStartTime(pid);
    let rec: SessionRecord;
    try {
      rec = await sessions.insert({ ...row, pid, pid_start: pidStart });
    } catch (err) {
      await undo(pid);
      throw err;
    }
    const entry = live.follow(rec);
    // Our child: its exit is an event, and the wrapper has written `exit` by then.
    void started.exited.then(() => {
      if (live.get(id) !== entry) return; // already ended
      if (entry.killing) return; // the kill records the end itself, as `killed`
      entry.pump.finish({}).catch((err: unknown) => log.error({ err, session: id }, 'finishing session failed'));
    });
    started.go();
    log.info({ session: id, task: task.id, agent, pid }, 'session started');
    markRunning(id, pid, pidStart);
    return publicSession(rec);
  };
}
