import { randomUUID } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import type { CreateProject, Project } from '../../schemas/project.ts';
import { readOrigin } from '../git/origin.ts';
import { git } from '../git/run.ts';
import { GroveError } from '../errors.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';
import type { ProjectConfigs } from './config.ts';
import { isUniqueViolation, type ProjectsTable } from '../store/projects.ts';

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
  // git's own ownership check comes first: in another user's repository it stops before it
  // reads that repository's config, so nothing of theirs runs.
  const res = await git(real, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir']);
  const [shown = '', commonDir = ''] = res.stdout.split('\n');
  if (res.exitCode !== 0 || shown === '' || commonDir === '') {
    const dubious = /detected dubious ownership in repository at '(.+)'/.exec(res.stderr);
    if (dubious) throw refuse(await ownerProblem(dubious[1]!, st.uid));
    const why = res.stderr.split('\n').find((l) => l.trim() !== '')?.replace(/^fatal: /, '') ?? 'git failed';
    throw refuse(`is not inside a git work tree (${why})`);
  }
  const top = await realpath(shown).catch(() => shown);
  // A task's worktree belongs to its project; adding it as a project of its own would nest tasks.
  if (top.split(path.sep).join('/').includes('/.grove/worktrees/')) {
    throw refuse('is a grove task worktree; add its project instead');
  }
  for (const p of [top, commonDir]) {
    const owner = (await stat(p).catch(() => null))?.uid;
    if (owner !== undefined && !ownedByDaemon(owner)) throw refuse(await ownerProblem(p, owner));
  }
  return top;
}

// Decision: a project must belong to the daemon's own user (process.getuid()), checked by
// grove itself on the work tree's top level and on its git folder. Adding a project means
// running its .grove.json setup commands, git hooks and config as the daemon's user; in a
// repository another user owns, that user would choose what runs as us (git refuses such
// repositories as "dubious ownership" for the same reason, but a `safe.directory` setting
// silences git's check, so grove does not rely on it). Answered 422 NOT_A_GIT_REPO, saying
// who owns it, rather than a new code: for the client it is a folder grove will not manage.
function ownedByDaemon(uid: number): boolean {
  return process.getuid === undefined || uid === process.getuid();
}

// `p` is what git or grove found foreign; git names the work tree even when only its .git
// folder is another user's, so that one is looked at too, to name the owner that differs.
async function ownerProblem(p: string, fallbackUid: number): Promise<string> {
  let at = p;
  let uid = fallbackUid;
  for (const candidate of [p, path.join(p, '.git')]) {
    const owner = (await stat(candidate).catch(() => null))?.uid;
    if (owner === undefined) continue;
    [at, uid] = [candidate, owner];
    if (!ownedByDaemon(owner)) break;
  }
  const me = process.getuid?.() ?? -1;
  return `is in a repository owned by another user (${at} belongs to uid ${uid}; the daemon runs as uid ${me}, ${userInfo().username}); grove only manages repositories of its own user`;
}

// Adding, listing and removing projects: the rules above the table.
export function createProjectService(deps: {
  projects: ProjectsTable;
  /** this daemon's host: the projects it adds are on its disk */
  hostId: string;
  countLiveTasks: (projectId: string) => Promise<number>;
  configs: Pick<ProjectConfigs, 'watch' | 'unwatch'>;
}) {
  const { projects } = deps;
  // Adds are serialised so that a default name's `-2` suffix and the duplicate check cannot race.
  const mutex = createKeyedMutex();

  async function pickName(base: string): Promise<string> {
    const taken = await projects.namesLike(deps.hostId, base);
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
        const existing = await projects.findByPath(deps.hostId, top);
        if (existing) throw new GroveError('PROJECT_EXISTS', `${top} is already project ${existing.name} (${existing.id})`);
        const base = (path.basename(top) || 'project').slice(0, 90);
        const name = input.name ?? (await pickName(base));
        try {
          const repository = (await readOrigin(top)) ?? null;
          const added = await projects.insert({ id: randomUUID(), name, path: top, host_id: deps.hostId, repository });
          deps.configs.watch(added.path);
          return added;
        } catch (err) {
          if (isUniqueViolation(err)) throw new GroveError('PROJECT_EXISTS', `a project named ${JSON.stringify(name)} exists already`);
          throw err;
        }
      });
    },
    // Origins change while the daemon is down (a remote renamed or moved): read again at start,
    // for this host's projects only (another host's folders are not on this disk).
    async refreshRepositories(): Promise<void> {
      for (const p of await projects.listOfHost(deps.hostId)) {
        const repository = await readOrigin(p.path);
        if (repository !== undefined && repository !== p.repository) await projects.setRepository(p.id, repository);
      }
    },
    // `before` runs once the project may go, before its row does (its warm pool's slots).
    async remove(id: string, before?: () => Promise<void>): Promise<void> {
      const p = await projects.get(id);
      if (!p) throw new GroveError('NOT_FOUND', `no project with id ${id}`);
      const live = await deps.countLiveTasks(id);
      if (live > 0) throw new GroveError('PROJECT_HAS_TASKS', `project ${p.name} has ${live} task(s) that are not archived; archive them first`);
      await before?.();
      await projects.remove(id);
      deps.configs.unwatch(p.path);
    },
  };
}

export type ProjectService = ReturnType<typeof createProjectService>;
