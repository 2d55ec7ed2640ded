import { randomUUID } from 'node:crypto';
import { copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { git } from '../../daemon/git/run.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';

// git's empty tree: the merge-base of histories that share none.
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

// A task's work as git sees it (DESIGN §9): its base's tip, the merge-base, HEAD, and `tree`, the
// working state as a tree (committed, uncommitted and untracked; ignored files excluded).
export interface Snapshot {
  baseTip: string;
  mergeBase: string;
  head: string;
  tree: string;
  /** files git does not track, not ignored */
  untracked: Set<string>;
}

// Runs git and returns its stdout, or a failure naming what failed.
export async function gitOut(cwd: string, args: string[], opts?: { env?: Record<string, string>; signal?: AbortSignal | undefined }): Promise<Result<{ out: string }>> {
  const r = await git(cwd, args, opts);
  if (r.exitCode !== 0) return fail('INTERNAL', `git ${args[0]} failed: ${firstLine(r.stderr)}`);
  return { ok: true, out: r.stdout };
}

// Uncommitted or untracked files in a checkout (ignored ones do not count); none when clean.
export async function dirtyFiles(checkout: string, opts: { untracked: boolean; signal?: AbortSignal | undefined }): Promise<Result<{ files: string[] }>> {
  const st = await gitOut(checkout, ['status', '--porcelain=v1', '-z', `--untracked-files=${opts.untracked ? 'all' : 'no'}`], { signal: opts.signal });
  if (!st.ok) return st;
  const files: string[] = [];
  const parts = st.out.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const rec = parts[i]!;
    if (rec === '') continue;
    files.push(rec.slice(3));
    if (rec[0] === 'R' || rec[0] === 'C') i++; // a rename's old path follows
  }
  return { ok: true, files };
}

// A worktree's uncommitted and untracked files, as a pool task (archiving checks it before teardown).
export function worktreeDirty(input: { worktree: string }): Promise<Result<{ files: string[] }>> {
  return dirtyFiles(input.worktree, { untracked: true });
}

// The commit `base` names: the branch of that name first, else any ref or commit.
export async function resolveBase(worktree: string, base: string, signal?: AbortSignal): Promise<Result<{ tip: string }>> {
  for (const ref of [`refs/heads/${base}`, base]) {
    const r = await git(worktree, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { signal });
    if (r.exitCode === 0) return { ok: true, tip: r.stdout.trim() };
  }
  return fail('BASE_NOT_FOUND', `the task's base ${JSON.stringify(base)} no longer names a commit`);
}

// A worktree's HEAD, HEAD's tree and index file, in one git call.
export async function headOf(worktree: string, signal?: AbortSignal): Promise<Result<{ head: string; headTree: string; index: string }>> {
  const r = await gitOut(worktree, ['rev-parse', '--path-format=absolute', 'HEAD', 'HEAD^{tree}', '--git-path', 'index'], { signal });
  if (!r.ok) return r;
  const [head, headTree, index] = r.out.split('\n') as [string, string, string];
  return { ok: true, head, headTree, index };
}

// A copy of an index file in the temporary folder (empty when there is none yet); `dispose`
// removes it and any lock git left beside it.
export function indexCopy(index: string): { file: string; dispose(): void } {
  const file = path.join(tmpdir(), `grove-index-${randomUUID()}`);
  try {
    copyFileSync(index, file);
  } catch {
    // no index yet: git starts from an empty one
  }
  return {
    file,
    dispose() {
      rmSync(file, { force: true });
      rmSync(`${file}.lock`, { force: true });
    },
  };
}

// The worktree's files as a tree, made in a copy of its index so that its own index is never
// touched: the copy keeps the file stats, so only changed files are read again.
export async function workingTree(worktree: string, index?: string, signal?: AbortSignal): Promise<Result<{ tree: string }>> {
  let indexFile = index;
  if (indexFile === undefined) {
    const h = await headOf(worktree, signal);
    if (!h.ok) return h;
    indexFile = h.index;
  }
  const copy = indexCopy(indexFile);
  try {
    const env = { GIT_INDEX_FILE: copy.file };
    const add = await gitOut(worktree, ['add', '--all', '--', '.'], { env, signal });
    if (!add.ok) return add;
    const tree = await gitOut(worktree, ['write-tree'], { env, signal });
    return tree.ok ? { ok: true, tree: tree.out.trim() } : tree;
  } finally {
    copy.dispose();
  }
}

// Everything the review endpoints start from; nothing in the repository changes but new objects.
export async function snapshot(worktree: string, base: string, signal?: AbortSignal): Promise<Result<Snapshot>> {
  // Independent git calls run side by side: each costs a fork of the daemon's process.
  const [tip, head, others] = await Promise.all([
    resolveBase(worktree, base, signal),
    headOf(worktree, signal),
    gitOut(worktree, ['ls-files', '--others', '--exclude-standard', '-z'], { signal }),
  ]);
  if (!tip.ok) return tip;
  if (!head.ok) return head;
  if (!others.ok) return others;
  const [mb, tree] = await Promise.all([git(worktree, ['merge-base', tip.tip, head.head], { signal }), workingTree(worktree, head.index, signal)]);
  if (!tree.ok) return tree;
  return {
    ok: true,
    baseTip: tip.tip,
    mergeBase: mb.exitCode === 0 ? mb.stdout.trim() : EMPTY_TREE,
    head: head.head,
    tree: tree.tree,
    untracked: new Set(others.out.split('\0').filter(Boolean)),
  };
}
