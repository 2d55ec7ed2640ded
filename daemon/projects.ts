import { randomUUID } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CreateProject, Project } from '../schemas/project.ts';
import { git } from './git.ts';
import { GroveError } from './http/errors.ts';
import { createKeyedMutex } from './keyed-mutex.ts';
import type { ProjectConfigs } from './project-config.ts';
import { isUniqueViolation, type ProjectsTable } from './store/projects.ts';

// Where a path inside a work tree leads: the canonical top level of that work tree.
export async function resolveWorkTree(input: string): Promise<string> {
  const refuse = (why: string) => new GroveError('NOT_A_GIT_REPO', `${input} ${why}`);
  let real: string;
  try {
    real = await realpath(input);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw refuse('does not exist');
    if (code === 'EACCES' || code === 'EPERM') throw refuse('cannot be read by the daemon');
    if (code === 'ELOOP') throw refuse('is a symlink loop');
    throw refuse(`cannot be resolved (${code})`);
  }
  const st = await stat(real).catch(() => null);
  if (!st?.isDirectory()) throw refuse('is not a directory');
  const res = await git(real, ['rev-parse', '--show-toplevel']);
  if (res.exitCode !== 0 || res.stdout === '') {
    const why = res.stderr.split('\n').find((l) => l.trim() !== '')?.replace(/^fatal: /, '') ?? 'git failed';
    throw refuse(`is not inside a git work tree (${why})`);
  }
  const top = await realpath(res.stdout).catch(() => res.stdout);
  // A task's worktree belongs to its project; adding it as a project of its own would nest tasks.
  if (top.split(path.sep).join('/').includes('/.grove/worktrees/')) {
    throw refuse('is a grove task worktree; add its project instead');
  }
  return top;
}

// Adding, listing and removing projects: the rules above the table.
export function createProjectService(deps: {
  projects: ProjectsTable;
  countLiveTasks: (projectId: string) => Promise<number>;
  configs: Pick<ProjectConfigs, 'watch' | 'unwatch'>;
}) {
  const { projects } = deps;
  // Adds are serialised so that a default name's `-2` suffix and the duplicate check cannot race.
  const mutex = createKeyedMutex();

  async function pickName(base: string): Promise<string> {
    const taken = await projects.namesLike(base);
    if (!taken.has(base)) return base;
    for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
  }

  return {
    list: () => projects.list(),
    async get(id: string): Promise<Project> {
      const p = await projects.get(id);
      if (!p) throw new GroveError('NOT_FOUND', `no project with id ${id}`);
      return p;
    },
    async add(input: CreateProject): Promise<Project> {
      const top = await resolveWorkTree(input.path);
      return mutex.run('add', async () => {
        const existing = await projects.findByPath(top);
        if (existing) throw new GroveError('PROJECT_EXISTS', `${top} is already project ${existing.name} (${existing.id})`);
        const base = (path.basename(top) || 'project').slice(0, 90);
        const name = input.name ?? (await pickName(base));
        try {
          const added = await projects.insert({ id: randomUUID(), name, path: top });
          deps.configs.watch(added.path);
          return added;
        } catch (err) {
          if (isUniqueViolation(err)) throw new GroveError('PROJECT_EXISTS', `a project named ${JSON.stringify(name)} exists already`);
          throw err;
        }
      });
    },
    async remove(id: string): Promise<void> {
      const p = await projects.get(id);
      if (!p) throw new GroveError('NOT_FOUND', `no project with id ${id}`);
      const live = await deps.countLiveTasks(id);
      if (live > 0) throw new GroveError('PROJECT_HAS_TASKS', `project ${p.name} has ${live} task(s) that are not archived; archive them first`);
      await projects.remove(id);
      deps.configs.unwatch(p.path);
    },
  };
}

export type ProjectService = ReturnType<typeof createProjectService>;
