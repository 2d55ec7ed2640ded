import path from 'node:path';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';

// The environment of a task's setup commands and sessions (DESIGN §2): the daemon's own, the
// project's `env`, then the GROVE_* values, which nothing can override.
export function taskEnv(project: Project, task: Task, config: ProjectConfig, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  // The daemon's GROVE_PORT is its TCP port setting, not the task's port: never pass it on.
  delete env.GROVE_PORT;
  delete env.PORT;
  // A GROVE_HOST of the shell that started the daemon (DESIGN §14.1) would send the task's own
  // `grove` commands to another machine's daemon: they are about this one.
  delete env.GROVE_HOST;
  Object.assign(env, config.env ?? {});
  env.GROVE_PROJECT_ID = project.id;
  env.GROVE_PROJECT_PATH = project.path;
  env.GROVE_TASK_ID = task.id;
  env.GROVE_TASK_NAME = task.name;
  env.GROVE_BRANCH = task.branch;
  env.GROVE_WORKTREE = path.join(project.path, task.worktree_path).replace(/\/+$/, '');
  // Ports are handed out in declaration order from the bottom of the range, so the first
  // declared port has the lowest host port.
  const assigned = Object.entries(task.ports).sort((a, b) => a[1] - b[1]);
  for (const [declared, port] of assigned) env[`GROVE_PORT_${declared}`] = String(port);
  if (assigned.length > 0) {
    env.GROVE_PORT = String(assigned[0]![1]);
    env.PORT = String(assigned[0]![1]);
  }
  return env;
}
