import type { Session } from '../../schemas/session.ts';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import type { Mode } from '../../schemas/config.ts';
import type { Agents } from '../agents/agents.ts';
import type { Logger } from '../runtime/log.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import { LIVE, publicSession, type SessionsTable } from '../store/sessions.ts';
import { createKill } from './kill.ts';
import { createLive } from './live.ts';
import { createReattach } from './reattach.ts';
import { findSession } from './record.ts';
import { createStart } from './start.ts';

// What the daemon gives the sessions: the tables, readers of tasks and projects, agents, where data lives.
export interface SessionServiceDeps {
  sessions: SessionsTable;
  getTask: (id: string) => Promise<Task>;
  getProject: (id: string) => Promise<Project>;
  configs: ProjectConfigs;
  agents: Agents;
  defaultAgent: string | undefined;
  defaultMode: Mode | undefined;
  dataDir: string;
  log: Logger;
}

// Agent sessions for the routes and the daemon: reads here, each verb in its own module.
export function createSessionService(deps: SessionServiceDeps) {
  const { sessions } = deps;
  const live = createLive({ sessions, dataDir: deps.dataDir, log: deps.log });
  const { kill, killAllOfTask } = createKill({ sessions, live });

  return {
    // 'progress:<id>' when lines were stored, 'end:<id>' when a session ended.
    events: live.events,

    async list(taskId: string): Promise<Session[]> {
      await deps.getTask(taskId);
      return (await sessions.listByTask(taskId)).map(publicSession);
    },

    async get(id: string): Promise<Session> {
      return publicSession(await findSession(sessions, id));
    },

    isLive: (s: Session) => LIVE.includes(s.status),

    async lines(id: string, after: number, limit: number) {
      await findSession(sessions, id);
      const lines = await sessions.lines(id, after, limit);
      return { lines, next: lines.length > 0 ? lines[lines.length - 1]!.seq : after };
    },

    create: createStart({ ...deps, live }),
    kill,
    killAllOfTask,
    reattach: createReattach({ sessions, live, log: deps.log }),
    close: live.close,
  };
}

// What the routes and the daemon hold.
export type SessionService = ReturnType<typeof createSessionService>;
