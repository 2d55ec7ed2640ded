import path from 'node:path';
import type { Conflict } from '../../schemas/review.ts';
import { git } from '../../daemon/git/run.ts';
import { createLimiter } from '../../daemon/runtime/limiter.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';
import { withScratch, type Scratch } from './scratch.ts';
import { gitOut, headOf, resolveBase, workingTree } from './snapshot.ts';

// git processes at once: the checks are many and small, and the machine has few cores.
const AT_ONCE = 4;

// The commits that stand for uncommitted work exist only as objects, named by no ref.
const CHECK_IDENTITY = { GIT_AUTHOR_NAME: 'grove', GIT_AUTHOR_EMAIL: 'grove@localhost', GIT_COMMITTER_NAME: 'grove', GIT_COMMITTER_EMAIL: 'grove@localhost' };

export interface ConflictsInput {
  repo: string;
  tasks: Array<{ id: string; worktree: string; base: string }>;
  /** the daemon's scratch folder, where a read keeps what it makes */
  scratch: string;
}

// The paths one side of a merge changed since the merge-base, in the shapes a conflict can take.
interface Touched {
  paths: Set<string>;
  /** every folder above a changed path */
  above: Set<string>;
  /** the folders a file was deleted from (where git may see a folder renamed) */
  emptied: Set<string>;
}

// A task's work: a commit (uncommitted work included), where it left its base, and what it changed.
interface Work {
  id: string;
  commit: string;
  tip: string;
  /** the one merge-base with the base's tip; null when there are several */
  fork: string | null;
  /** commits of its own since the fork */
  own: Set<string>;
  touched: Touched;
}

function parents(p: string): string[] {
  const out: string[] = [];
  for (let d = path.posix.dirname(p); d !== '.'; d = path.posix.dirname(d)) out.push(d);
  return out;
}

// What `git diff --name-status -z --no-renames from to` lists, as Touched.
async function touched(repo: string, from: string, to: string, scratch: Scratch, signal?: AbortSignal): Promise<Result<{ touched: Touched }>> {
  const r = await gitOut(repo, ['diff', '--name-status', '-z', '--no-renames', from, to], { env: scratch.env, signal });
  if (!r.ok) return r;
  const t: Touched = { paths: new Set(), above: new Set(), emptied: new Set() };
  const parts = r.out.split('\0');
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const file = parts[i + 1]!;
    t.paths.add(file);
    for (const d of parents(file)) t.above.add(d);
    if (parts[i] === 'D') t.emptied.add(path.posix.dirname(file));
  }
  return { ok: true, touched: t };
}

// Whether two sides' changes can meet in a merge: the same path, a file where the other has a
// folder, or a new path in a folder the other emptied (a folder rename). When they cannot, the
// merge is clean without running it.
function canMeet(a: Touched, b: Touched): boolean {
  for (const [x, y] of [
    [a, b],
    [b, a],
  ] as const) {
    for (const p of x.paths) {
      if (y.paths.has(p) || y.above.has(p)) return true;
      if (parents(p).some((d) => y.emptied.has(d))) return true;
    }
  }
  return false;
}

// A task's work as a commit: HEAD when the worktree is clean, else a commit of its working tree
// on top of HEAD (an object only, in the scratch: no ref, no index changes).
async function workCommit(worktree: string, scratch: Scratch, signal?: AbortSignal): Promise<Result<{ commit: string }>> {
  const h = await headOf(worktree, signal);
  if (!h.ok) return h;
  const tree = await workingTree(worktree, scratch, h.index, signal);
  if (!tree.ok) return tree;
  if (h.headTree === tree.tree) return { ok: true, commit: h.head };
  const c = await gitOut(worktree, ['commit-tree', tree.tree, '-p', h.head, '-m', 'grove: uncommitted work'], { env: { ...scratch.env, ...CHECK_IDENTITY }, signal });
  return c.ok ? { ok: true, commit: c.out.trim() } : c;
}

// Everything about one task that the checks need.
async function workOf(repo: string, t: ConflictsInput['tasks'][number], scratch: Scratch, signal?: AbortSignal): Promise<Result<{ work: Work | null }>> {
  const [commit, base] = await Promise.all([workCommit(t.worktree, scratch, signal), resolveBase(t.worktree, t.base, signal)]);
  if (!commit.ok) return commit;
  if (!base.ok) return signal?.aborted ? base : { ok: true, work: null }; // a base that is gone has nothing to conflict with
  const opts = { env: scratch.env, signal };
  const mb = await git(repo, ['merge-base', '--all', commit.commit, base.tip], opts);
  const bases = mb.exitCode === 0 ? mb.stdout.split('\n').filter(Boolean) : [];
  const fork = bases.length === 1 ? bases[0]! : null;
  const own = fork ? await gitOut(repo, ['rev-list', `${fork}..${commit.commit}`], opts) : null;
  if (own && !own.ok) return own;
  const changed = fork ? await touched(repo, fork, commit.commit, scratch, signal) : null;
  if (changed && !changed.ok) return changed;
  return {
    ok: true,
    work: {
      id: t.id,
      commit: commit.commit,
      tip: base.tip,
      fork,
      own: new Set(own ? own.out.split('\n').filter(Boolean) : []),
      touched: changed ? changed.touched : { paths: new Set(), above: new Set(), emptied: new Set() },
    },
  };
}

// The files two commits conflict in when merged (none: they merge cleanly).
async function conflictingFiles(repo: string, a: string, b: string, scratch: Scratch, signal?: AbortSignal): Promise<Result<{ files: string[] }>> {
  const r = await git(repo, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', a, b], { env: scratch.env, signal });
  if (r.exitCode === 0) return { ok: true, files: [] };
  if (r.exitCode !== 1) return fail('INTERNAL', `git merge-tree failed: ${firstLine(r.stderr)}`);
  return { ok: true, files: [...new Set(r.stdout.split('\0').slice(1).filter(Boolean))] };
}

// GET /api/projects/:id/conflicts: every pair of live tasks, and each task against its base,
// merged with `git merge-tree --write-tree` on their work (uncommitted included); nothing is
// checked out, no ref or index changes, and every object made stays in the read's scratch. A merge
// is skipped only where it is known clean: both sides leave the same merge-base (a task's fork
// point, with no commit in common after it) and their changes cannot meet.
export async function projectConflicts(input: ConflictsInput, signal?: AbortSignal): Promise<Result<{ conflicts: Conflict[] }>> {
  if (input.tasks.length === 0) return { ok: true, conflicts: [] };
  return withScratch(input.scratch, input.repo, (scratch) => conflictsIn(input, scratch, signal), signal);
}

async function conflictsIn(input: ConflictsInput, scratch: Scratch, signal: AbortSignal | undefined): Promise<Result<{ conflicts: Conflict[] }>> {
  const { repo } = input;
  const limit = createLimiter(AT_ONCE);
  const works: Work[] = [];
  for (const r of await Promise.all(input.tasks.map((t) => limit.run(() => workOf(repo, t, scratch, signal))))) {
    if (!r.ok) return r;
    if (r.work) works.push(r.work);
  }
  // What the base changed since each fork point, once per fork point.
  const baseSides = new Map<string, Promise<Result<{ touched: Touched }>>>();
  const baseSide = (w: Work) => {
    const key = `${w.fork}..${w.tip}`;
    if (!baseSides.has(key)) baseSides.set(key, limit.run(() => touched(repo, w.fork!, w.tip, scratch, signal)));
    return baseSides.get(key)!;
  };

  const checks: Array<{ task_id: string; with: string; run: () => Promise<Result<{ files: string[] }>> }> = [];
  const merge = (a: string, b: string) => () => limit.run(() => conflictingFiles(repo, a, b, scratch, signal));
  const clean = async (): Promise<Result<{ files: string[] }>> => ({ ok: true, files: [] });
  for (const w of works) {
    const run = async () => {
      if (w.fork === null) return merge(w.commit, w.tip)();
      const side = await baseSide(w);
      if (!side.ok) return side;
      return canMeet(w.touched, side.touched) ? merge(w.commit, w.tip)() : clean();
    };
    checks.push({ task_id: w.id, with: 'base', run });
  }
  for (let i = 0; i < works.length; i++) {
    for (let j = i + 1; j < works.length; j++) {
      const [a, b] = [works[i]!, works[j]!];
      const sameFork = a.fork !== null && a.fork === b.fork && ![...a.own].some((c) => b.own.has(c));
      const skip = sameFork && !canMeet(a.touched, b.touched);
      checks.push({ task_id: a.id, with: b.id, run: skip ? clean : merge(a.commit, b.commit) });
    }
  }
  const results = await Promise.all(checks.map((c) => c.run()));
  const conflicts: Conflict[] = [];
  for (const [i, r] of results.entries()) {
    if (!r.ok) return r;
    if (r.files.length > 0) conflicts.push({ task_id: checks[i]!.task_id, with: checks[i]!.with, files: r.files });
  }
  return { ok: true, conflicts };
}
