import { git } from '../../daemon/git/run.ts';
import { createLimiter } from '../../daemon/runtime/limiter.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';
import { gitOut, resolveBase, workingTree } from './snapshot.ts';

// git processes at once: the checks are many and small, and the machine has few cores.
const AT_ONCE = 4;

// The commits that stand for uncommitted work exist only as objects, named by no ref.
const CHECK_IDENTITY = { GIT_AUTHOR_NAME: 'grove', GIT_AUTHOR_EMAIL: 'grove@localhost', GIT_COMMITTER_NAME: 'grove', GIT_COMMITTER_EMAIL: 'grove@localhost' };

export interface ConflictsInput {
  repo: string;
  tasks: Array<{ id: string; worktree: string; base: string }>;
}

export interface ConflictPair {
  task_id: string;
  /** another task's id, or "base" */
  with: string;
  files: string[];
}

// A task's work as a commit: HEAD when the worktree is clean, else a commit of its working tree
// on top of HEAD (an object only: no ref, no index changes).
async function workCommit(worktree: string): Promise<Result<{ commit: string }>> {
  const head = await gitOut(worktree, ['rev-parse', '--verify', 'HEAD^{commit}']);
  if (!head.ok) return head;
  const tree = await workingTree(worktree);
  if (!tree.ok) return tree;
  const headTree = await gitOut(worktree, ['rev-parse', 'HEAD^{tree}']);
  if (!headTree.ok) return headTree;
  if (headTree.out.trim() === tree.tree) return { ok: true, commit: head.out.trim() };
  const c = await gitOut(worktree, ['commit-tree', tree.tree, '-p', head.out.trim(), '-m', 'grove: uncommitted work'], { env: CHECK_IDENTITY });
  return c.ok ? { ok: true, commit: c.out.trim() } : c;
}

// The files two commits conflict in when merged (none: they merge cleanly).
async function conflictingFiles(repo: string, a: string, b: string): Promise<Result<{ files: string[] }>> {
  const r = await git(repo, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', a, b]);
  if (r.exitCode === 0) return { ok: true, files: [] };
  if (r.exitCode !== 1) return fail('INTERNAL', `git merge-tree failed: ${firstLine(r.stderr)}`);
  return { ok: true, files: [...new Set(r.stdout.split('\0').slice(1).filter(Boolean))] };
}

// GET /api/projects/:id/conflicts: every pair of live tasks, and each task against its base,
// merged with `git merge-tree --write-tree` on their work (uncommitted included); nothing is
// checked out and no ref or index changes.
export async function projectConflicts(input: ConflictsInput): Promise<Result<{ conflicts: ConflictPair[] }>> {
  const limit = createLimiter(AT_ONCE);
  const work = await Promise.all(
    input.tasks.map((t) =>
      limit.run(async () => {
        const [commit, base] = await Promise.all([workCommit(t.worktree), resolveBase(t.worktree, t.base)]);
        return { id: t.id, commit, base };
      }),
    ),
  );
  const checks: Array<{ task_id: string; with: string; a: string; b: string }> = [];
  const ready: Array<{ id: string; commit: string }> = [];
  for (const w of work) {
    if (!w.commit.ok) return w.commit;
    if (!w.base.ok) continue; // a base that is gone has nothing to conflict with
    ready.push({ id: w.id, commit: w.commit.commit });
    checks.push({ task_id: w.id, with: 'base', a: w.commit.commit, b: w.base.tip });
  }
  for (let i = 0; i < ready.length; i++) {
    for (let j = i + 1; j < ready.length; j++) checks.push({ task_id: ready[i]!.id, with: ready[j]!.id, a: ready[i]!.commit, b: ready[j]!.commit });
  }
  const results = await Promise.all(checks.map((c) => limit.run(() => conflictingFiles(input.repo, c.a, c.b))));
  const conflicts: ConflictPair[] = [];
  for (const [i, r] of results.entries()) {
    if (!r.ok) return r;
    if (r.files.length > 0) conflicts.push({ task_id: checks[i]!.task_id, with: checks[i]!.with, files: r.files });
  }
  return { ok: true, conflicts };
}
