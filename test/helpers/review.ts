import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, makeRepo, makeTempDir } from './git.ts';

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
