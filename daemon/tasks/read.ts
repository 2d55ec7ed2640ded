import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import { withPresence as present, type StoredTask, type TasksTable } from '../store/tasks.ts';

// Tasks as the API shows them: a live task whose folder is gone (deleted by hand) says so.
export function createTaskReader(deps: { tasks: TasksTable; getProject: (id: string) => Promise<Project> }) {
  const { tasks, getProject } = deps;

  async function withPresence(t: StoredTask, projectPath?: string): Promise<Task> {
    if (t.status === 'archived') return { ...t, worktree_missing: false };
    return present(t, projectPath ?? (await getProject(t.project_id)).path);
  }

  return {
    async get(id: string): Promise<Task> {
      const t = await tasks.get(id);
      if (!t) throw new GroveError('NOT_FOUND', `no task with id ${id}`);
      return withPresence(t);
    },
    async list(projectId?: string): Promise<Task[]> {
      const rows = await tasks.list(projectId);
      const roots = new Map<string, Promise<string>>();
      return Promise.all(
        rows.map((t) => {
          let root = roots.get(t.project_id);
          if (!root) roots.set(t.project_id, (root = getProject(t.project_id).then((p) => p.path)));
          return root.then((r) => withPresence(t, r));
        }),
      );
    },
  };
}

export type TaskReader = ReturnType<typeof createTaskReader>;
