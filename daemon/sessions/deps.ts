import type { Mode } from '../../schemas/config.ts';
import type { Project } from '../../schemas/project.ts';
import type { TurnRef } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import type { Agents } from '../agents/agents.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import type { Confine } from './confine.ts';
import type { Spawner } from './spawner.ts';
import type { Logger } from '../runtime/log.ts';
import type { SessionsTable } from '../store/sessions.ts';
import type { TaskGate } from '../tasks/gate.ts';

// What the daemon gives the sessions: the tables, readers of tasks and projects, agents, where
// data lives, and the user config's defaults. In a module of its own because both the service
// and the starter it composes read it: neither imports the other for it.
export interface SessionServiceDeps {
  sessions: SessionsTable;
  getTask: (id: string) => Promise<Task>;
  getProject: (id: string) => Promise<Project>;
  configs: ProjectConfigs;
  agents: Agents;
  defaultAgent: string | undefined;
  defaultMode: Mode | undefined;
  defaultTimeoutS: number | undefined;
  /** queue a follow-up when a usage limit resets (DESIGN §8), with this prompt */
  autoResume: { enabled: boolean; prompt: string };
  dataDir: string;
  /** agent sessions confined (DESIGN §18) */
  confine: Confine;
  /** whether a pseudo-terminal can be made here (DESIGN §21), checked once, at the first call */
  pty: () => Promise<{ ok: true } | { ok: false; detail: string }>;
  /** forks the sessions' wrappers (spawner.ts) */
  spawner: Spawner;
  /** each agent session's own socket, where its bridges ask (DESIGN §18) */
  sockets: { open(sessionId: string, socketPath: string): Promise<void>; close(sessionId: string): Promise<void> };
  /** shared with the archive: no session of a task starts once its archive has begun */
  gate: TaskGate;
  /** an agent session's end records its task's turn (DESIGN §17): null when none was; never throws */
  checkpoint: (taskId: string, sessionId: string) => Promise<TurnRef | null>;
  log: Logger;
}
