import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { CreateSession, Session } from '../../schemas/session.ts';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { buildCommand, which, type Agents } from '../agents/agents.ts';
import { GroveError } from '../errors.ts';
import { createLimiter } from '../runtime/limiter.ts';
import type { Logger } from '../runtime/log.ts';
import { groupMembers } from '../proc/group.ts';
import { GRACE_MS, terminate } from '../proc/terminate.ts';
import { isSameProcessAlive, processStartTime } from '../proc/stat.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import { LIVE, publicSession, type SessionRecord, type SessionsTable } from '../store/sessions.ts';
import { taskEnv } from '../tasks/env.ts';
import { createPump, type Pump } from './pump.ts';
import { startWrapped, type SpawnResult } from './spawn.ts';
import { sessionFiles } from './wrapper.ts';

// A re-attached session is not our child: nothing tells us when it exits, so look every second.
const LIVENESS_MS = 1000;

export interface SessionServiceDeps {
  sessions: SessionsTable;
  getTask: (id: string) => Promise<Task>;
  getProject: (id: string) => Promise<Project>;
  configs: ProjectConfigs;
  agents: Agents;
  defaultAgent: string | undefined;
  dataDir: string;
  log: Logger;
}

interface Live {
  pump: Pump;
  timer: NodeJS.Timeout | null;
  killing: Promise<void> | null;
}

// Starting, following, killing and re-attaching agent sessions.
export function createSessionService(deps: SessionServiceDeps) {
  const { sessions, log } = deps;
  const live = new Map<string, Live>();
  // Output rounds of all sessions, two at a time: one being stored, the next one ready.
  const rounds = createLimiter(2);
  // 'progress:<id>' when lines were stored, 'end:<id>' when a session ended.
  const events = new EventEmitter();
  events.setMaxListeners(0);

  async function getRecord(id: string): Promise<SessionRecord> {
    const s = await sessions.get(id);
    if (!s) throw new GroveError('NOT_FOUND', `no session with id ${id}`);
    return s;
  }

  function follow(rec: SessionRecord): Live {
    const entry: Live = {
      pump: createPump(rec, {
        files: sessionFiles(deps.dataDir, rec.id),
        sessions,
        rounds,
        log,
        onProgress: () => events.emit(`progress:${rec.id}`),
        onEnd: () => {
          const e = live.get(rec.id);
          if (e?.timer) clearInterval(e.timer);
          live.delete(rec.id);
          events.emit(`end:${rec.id}`);
        },
      }),
      timer: null,
      killing: null,
    };
    live.set(rec.id, entry);
    return entry;
  }

  function watchLiveness(rec: SessionRecord, entry: Live): void {
    entry.timer = setInterval(() => {
      if (rec.pid !== null && rec.pid_start !== null && isSameProcessAlive(rec.pid, rec.pid_start)) return;
      clearInterval(entry.timer!);
      entry.timer = null;
      if (!entry.killing) void entry.pump.finish({});
    }, LIVENESS_MS);
    entry.timer.unref();
  }

  async function kill(rec: SessionRecord): Promise<void> {
    const entry = live.get(rec.id);
    const pgid = rec.pid;
    if (pgid !== null) {
      // The wrapper still being the recorded process, or members left in its group, make the
      // group id ours; a group with no members may have been reused, so it is not signalled.
      const ours = (rec.pid_start !== null && isSameProcessAlive(pgid, rec.pid_start)) || groupMembers(pgid).length > 0;
      if (ours) await terminate(pgid, { graceMs: GRACE_MS.session });
    }
    if (entry) await entry.pump.finish({ status: 'killed', exitCode: null });
    else await sessions.end(rec.id, 'killed', null);
  }

  // TERM to the group, KILL after the grace time; resolves once the whole group is gone.
  async function killById(id: string): Promise<{ status: 'killed' }> {
    const rec = await getRecord(id);
    if (rec.status === 'killed') return { status: 'killed' };
    if (!LIVE.includes(rec.status)) {
      throw new GroveError('SESSION_NOT_RUNNING', `session ${id} has already ended (${rec.status})`);
    }
    const entry = live.get(id);
    const killing = entry?.killing ?? kill(rec);
    if (entry) entry.killing = killing;
    await killing;
    const after = await getRecord(id);
    if (after.status !== 'killed') throw new GroveError('SESSION_NOT_RUNNING', `session ${id} ended (${after.status}) before it was killed`);
    return { status: 'killed' };
  }

  return {
    events,

    async list(taskId: string): Promise<Session[]> {
      await deps.getTask(taskId);
      return (await sessions.listByTask(taskId)).map(publicSession);
    },

    async get(id: string): Promise<Session> {
      return publicSession(await getRecord(id));
    },

    isLive: (s: Session) => LIVE.includes(s.status),

    async create(taskId: string, input: CreateSession): Promise<Session> {
      const task = await deps.getTask(taskId);
      if (task.status !== 'ready') throw new GroveError('TASK_NOT_READY', `task ${task.name} is ${task.status}; sessions start on ready tasks`);
      const project = await deps.getProject(task.project_id);
      const config = deps.configs.load(project.path);
      const agentName = input.agent ?? config.agent ?? deps.defaultAgent;
      if (agentName === undefined) {
        throw new GroveError('AGENT_REQUIRED', 'no agent given, and neither the project (.grove.json "agent") nor the user config ("default_agent") names one');
      }
      const def = deps.agents.get(agentName);
      const command = buildCommand(def, input.prompt, input.args);
      if (which(command[0]!) === null) {
        throw new GroveError('AGENT_NOT_INSTALLED', `${command[0]} (agent ${agentName}) is not on the daemon's PATH`);
      }
      const cwd = path.join(project.path, task.worktree_path);
      if (!existsSync(cwd)) throw new GroveError('TASK_NOT_READY', `the worktree of task ${task.name} is missing (${cwd})`);

      const id = randomUUID();
      const env = { ...taskEnv(project, task, config), ...(def.env ?? {}), GROVE_SESSION_ID: id, GROVE_AGENT: agentName };
      const files = sessionFiles(deps.dataDir, id);
      // A start that cannot be recorded (a full disk) leaves no row, no files and no process.
      const undo = async (pgid?: number) => {
        if (pgid !== undefined) await terminate(pgid, { graceMs: 0 });
        rmSync(files.dir, { recursive: true, force: true });
      };
      // The wrapper first, held (see wrapper.ts): the row is then written once, with its pid,
      // and only then does the agent run.
      let started: SpawnResult;
      try {
        started = await startWrapped({ files, command, cwd, env });
      } catch (err) {
        await undo();
        throw err;
      }
      const row = { id, task_id: task.id, agent: agentName, command };
      if (!started.ok) {
        log.error({ err: started.message, session: id }, 'session failed to start');
        await sessions.insert(row);
        await sessions.end(id, 'failed', null);
        return publicSession(await getRecord(id));
      }
      const pid = started.pid;
      const pidStart = processStartTime(pid);
      let rec: SessionRecord;
      try {
        rec = await sessions.insert({ ...row, pid, pid_start: pidStart });
      } catch (err) {
        await undo(pid);
        throw err;
      }
      const entry = follow(rec);
      // Our child: its exit is an event, and the wrapper has written `exit` by then.
      void started.exited.then(() => {
        if (live.get(id) !== entry) return; // already ended
        if (entry.killing) return; // the kill records the end itself, as `killed`
        entry.pump.finish({}).catch((err: unknown) => log.error({ err, session: id }, 'finishing session failed'));
      });
      started.go();
      log.info({ session: id, task: task.id, agent: agentName, pid }, 'session started');
      const answer = publicSession(rec);
      // `running` once the process is confirmed alive, after the 201 has said `starting`.
      setImmediate(() => {
        if (pidStart === null || !isSameProcessAlive(pid, pidStart)) return;
        void sessions.markRunning(id).then((changed) => {
          if (changed) {
            log.debug({ session: id }, 'session running');
            events.emit(`progress:${id}`);
          }
        });
      });
      return answer;
    },

    kill: killById,

    // Every live session of a task is killed (archiving the task).
    async killAllOfTask(taskId: string): Promise<void> {
      const all = await sessions.listByTask(taskId);
      await Promise.all(all.filter((s) => LIVE.includes(s.status)).map((s) => killById(s.id).catch(() => {})));
    },



    async lines(id: string, after: number, limit: number) {
      await getRecord(id);
      const lines = await sessions.lines(id, after, limit);
      return { lines, next: lines.length > 0 ? lines[lines.length - 1]!.seq : after };
    },

    // At start: follow on with sessions whose process lives; finish the others from their files.
    async reattach(): Promise<void> {
      for (const rec of await sessions.listLive()) {
        const entry = follow(rec);
        if (rec.pid !== null && rec.pid_start !== null && isSameProcessAlive(rec.pid, rec.pid_start)) {
          watchLiveness(rec, entry);
          log.info({ session: rec.id, pid: rec.pid }, 're-attached to running session');
          if (rec.status === 'starting') await sessions.markRunning(rec.id);
        } else {
          await entry.pump.finish({});
        }
      }
    },

    // The daemon stops following; the agents keep running (DESIGN §5).
    async close(): Promise<void> {
      for (const entry of live.values()) {
        if (entry.timer) clearInterval(entry.timer);
        if (entry.killing) await entry.killing.catch(() => {});
        await entry.pump.stop();
      }
      live.clear();
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
