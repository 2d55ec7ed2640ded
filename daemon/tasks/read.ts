import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import type { StoredTask, TasksTable } from '../store/tasks.ts';

// A real folder, not a symlink to one (archiving never follows a link either); the path is
// resolved first, since a stored worktree path ends in "/" and lstat follows a link named so.
function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

// The API's view of a task (the store's TaskView, given to it for its events): a live task
// whose folder is gone (deleted by hand) says so.
export function withPresence(t: StoredTask, projectPath: string): Task {
  return { ...t, worktree_missing: t.status !== 'archived' && !isDir(path.resolve(projectPath, t.worktree_path)) };
}

// Tasks as the API shows them: a live task whose folder is gone (deleted by hand) says so.
// Another host's task (on a shared store) is on a disk this daemon cannot look at: its folder
// is not known missing, and its path here means nothing.
export function createTaskReader(deps: { tasks: TasksTable; getProject: (id: string) => Promise<Project>; hostId: string }) {
  const { tasks, getProject } = deps;

  async function present(t: StoredTask, projectPath?: string): Promise<Task> {
    if (t.status === 'archived' || t.host_id !== deps.hostId) return { ...t, worktree_missing: false };
    return withPresence(t, projectPath ?? (await getProject(t.project_id)).path);
  }

  return {
    // Its worktree is on this host's disk (DESIGN §14.2: only the owner writes it).
    isLocal: (t: Pick<Task, 'host_id'>): boolean => t.host_id === deps.hostId,
    async get(id: string): Promise<Task> {
      const t = await tasks.get(id);
      if (!t) throw new GroveError('NOT_FOUND', `no task with id ${id}`);
      return present(t);
    },
    async list(projectId?: string): Promise<Task[]> {
      const rows = await tasks.list(projectId);
      const roots = new Map<string, Promise<string>>();
      return Promise.all(
        rows.map((t) => {
          let root = roots.get(t.project_id);
          if (!root) roots.set(t.project_id, (root = getProject(t.project_id).then((p) => p.path)));
          return root.then((r) => present(t, r));
        }),
      );
    },
  };
}

export type TaskReader = ReturnType<typeof createTaskReader>;
