import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createLandingJournal } from '../../daemon/journal/landing.ts';
import { createLanding } from '../../daemon/landing/service.ts';
import { emptyScratch } from '../../daemon/runtime/scratch.ts';
import { createTaskGate } from '../../daemon/tasks/gate.ts';
import { createTaskService } from '../../daemon/tasks/service.ts';
import { git, makeRepo, makeTempDir } from './git.ts';
import { taskParts, type Cleanup } from './tasks.ts';

// A repository with main checked out, and a task's worktree on grove/x with one commit of its
// own on `taskFile`; main then moves on with a commit on `baseFile` (none when null).
export function forkedTask(t: { after(fn: () => unknown): void }, taskFile: string, baseFile: string | null) {
  const repo = makeRepo(t, { files: { 'a.txt': 'a\n', 'b.txt': 'b\n' } });
  const wt = path.join(makeTempDir(t), 'wt');
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/x', wt);
  writeFileSync(path.join(wt, taskFile), 'from the task\n');
  git(wt, 'commit', '-q', '-am', 'task work');
  if (baseFile) {
    writeFileSync(path.join(repo, baseFile), 'from main\n');
    git(repo, 'commit', '-q', '-am', 'main moves');
  }
  return { repo, wt, old: git(repo, 'rev-parse', 'main'), head: git(wt, 'rev-parse', 'HEAD') };
}

// Review and landing as the daemon wires them (daemon/landing/service.ts), in this process: the
// task service makes real tasks (git worktrees) and lends its per-task and per-project turns.
// `runningAgent` answers what the test says (none by default). Closed after `t`: a test, or a
// file whose tests share the set.
export async function landingParts(t: Cleanup, opts: { runningAgent?: (taskId: string) => Promise<string | null> } = {}) {
  const parts = await taskParts(t);
  const gate = createTaskGate();
  const tasks = createTaskService({ ...parts, gate, killSessions: async () => {}, setupTimeoutS: 60, gitTimeoutS: 60 });
  t.after(() => tasks.close());
  const dataDir = parts.testStore.dataDir;
  const landing = createLanding({
    tasks: parts.tasks,
    read: parts.read,
    getProject: parts.getProject,
    pool: parts.pool,
    perProject: tasks.perProject,
    perTask: tasks.perTask,
    gitTimeoutS: 60,
    setupTimeoutS: 60,
    landingJournal: createLandingJournal(path.join(dataDir, 'journal')),
    scratch: emptyScratch(dataDir),
    gate,
    runningAgent: opts.runningAgent ?? (async () => null),
    log: parts.log,
  });
  // A ready task of a new project (or of `projectId`), with its worktree's absolute path.
  async function task(name: string, projectId?: string) {
    const pid = projectId ?? (await parts.project()).id;
    const created = await tasks.create({ project_id: pid, name });
    const project = await parts.getProject(pid);
    return { ...created.task, repo: project.path, wt: path.join(project.path, created.task.worktree_path) };
  }
  return { ...parts, gate, taskService: tasks, landing, review: landing.review, task };
}
