import { lstatSync } from 'node:fs';
import path from 'node:path';
import { git } from '../../daemon/git/run.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Fail, type Result } from '../result.ts';
import type { Scratch } from './scratch.ts';

// git's empty tree: the merge-base of histories that share none.
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

// A task's work as git sees it (DESIGN §9): its base's tip, the merge-base, HEAD, and `env`, the
// environment under which `git diff <commit>` compares that commit with the working state
// (committed, uncommitted and untracked; ignored files excluded): a private copy of the worktree's
// index where untracked files are intended to be added. Changed files are read, never stored.
export interface Snapshot {
  baseTip: string;
  mergeBase: string;
  head: string;
  env: Record<string, string>;
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

// The commit `base` names: the branch of that name first, else any ref or commit.
export async function resolveBase(worktree: string, base: string, signal?: AbortSignal): Promise<Result<{ tip: string }>> {
  for (const ref of [`refs/heads/${base}`, base]) {
    const r = await git(worktree, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { signal });
    if (r.exitCode === 0) return { ok: true, tip: r.stdout.trim() };
  }
  return fail('BASE_NOT_FOUND', `the task's base ${JSON.stringify(base)} no longer names a commit`);
}

// What a rebase starts from: the commit `base` names (as resolveBase), the worktree's HEAD and
// the branch checked out there (null when detached), in one git call when the base is a branch.
export async function rebaseStart(worktree: string, base: string, signal?: AbortSignal): Promise<Result<{ tip: string; head: string; branch: string | null }>> {
  const r = await git(worktree, ['rev-parse', `refs/heads/${base}^{commit}`, 'HEAD', '--symbolic-full-name', 'HEAD'], { signal });
  const [tip, head, name, ...rest] = r.stdout.split('\n');
  if (r.exitCode === 0 && rest.length === 0 && SHA.test(tip!) && SHA.test(head!) && name) return { ok: true, tip: tip!, head: head!, branch: name === 'HEAD' ? null : name };
  // Not a branch (a tag, a commit), or no HEAD: one at a time, for the answer each gives.
  const t = await resolveBase(worktree, base, signal);
  if (!t.ok) return t;
  const before = await gitOut(worktree, ['rev-parse', 'HEAD'], { signal });
  if (!before.ok) return before;
  const branch = await git(worktree, ['symbolic-ref', '--quiet', 'HEAD'], { signal });
  return { ok: true, tip: t.tip, head: before.out.trim(), branch: branch.exitCode === 0 ? branch.stdout.trim() : null };
}

// A full object name, as rev-parse prints one.
export const SHA = /^[0-9a-f]{40,64}$/;

// A worktree's HEAD, HEAD's tree and index file, in one git call.
export async function headOf(worktree: string, signal?: AbortSignal): Promise<Result<{ head: string; headTree: string; index: string }>> {
  const r = await gitOut(worktree, ['rev-parse', '--path-format=absolute', 'HEAD', 'HEAD^{tree}', '--git-path', 'index'], { signal });
  if (!r.ok) return r;
  const [head, headTree, index] = r.out.split('\n') as [string, string, string];
  return { ok: true, head, headTree, index };
}

// A tracked path that is no file git can read (a FIFO, a socket, a device): git refuses to hash it.
async function unreadableFile(worktree: string, env: Record<string, string>, signal?: AbortSignal): Promise<string | null> {
  const files = await gitOut(worktree, ['ls-files', '-z'], { env, signal });
  if (!files.ok) return null;
  for (const file of files.out.split('\0')) {
    if (file === '') continue;
    try {
      const st = lstatSync(path.join(worktree, file));
      if (!st.isFile() && !st.isSymbolicLink() && !st.isDirectory()) return file;
    } catch {
      // gone: a deletion, which git takes
    }
  }
  return null;
}

// A failure of git reading the worktree, as UNSUPPORTED_FILE when a tracked path is no file git
// can read (git's own message names internals).
export async function readFailure(worktree: string, env: Record<string, string>, failure: Fail, signal?: AbortSignal): Promise<Fail> {
  if (signal?.aborted) return failure; // stopped: the bound or the client answers for it
  const file = await unreadableFile(worktree, env, signal);
  if (file === null) return failure;
  return fail('UNSUPPORTED_FILE', `${JSON.stringify(file)} in the task's worktree is not a regular file, symbolic link or folder (a FIFO, socket or device): it cannot be read as a change`);
}

// The worktree's files as a tree, its objects written in the scratch, made in the scratch's copy
// of the worktree's index so that its own index is never touched: the copy keeps the file stats,
// so only changed files are read again.
export async function workingTree(worktree: string, scratch: Scratch, index: string, signal?: AbortSignal): Promise<Result<{ tree: string }>> {
  const env = { ...scratch.env, GIT_INDEX_FILE: scratch.indexCopy(index) };
  const add = await gitOut(worktree, ['add', '--all', '--', '.'], { env, signal });
  if (!add.ok) return readFailure(worktree, env, add, signal);
  const tree = await gitOut(worktree, ['write-tree'], { env, signal });
  return tree.ok ? { ok: true, tree: tree.out.trim() } : tree;
}

// Everything the review endpoints start from; nothing in the repository or the worktree changes.
export async function snapshot(worktree: string, base: string, scratch: Scratch, signal?: AbortSignal): Promise<Result<Snapshot>> {
  // Independent git calls run side by side: each costs a fork of the daemon's process.
  const [tip, head, others] = await Promise.all([
    resolveBase(worktree, base, signal),
    headOf(worktree, signal),
    gitOut(worktree, ['ls-files', '--others', '--exclude-standard', '-z'], { signal }),
  ]);
  if (!tip.ok) return tip;
  if (!head.ok) return head;
  if (!others.ok) return others;
  // `git diff` shows untracked files once they are intended to be added; with none, the copy serves as it is.
  const env = { ...scratch.env, GIT_INDEX_FILE: scratch.indexCopy(head.index) };
  const [mb, intended] = await Promise.all([
    git(worktree, ['merge-base', tip.tip, head.head], { signal }),
    others.out === '' ? null : gitOut(worktree, ['add', '--intent-to-add', '--', '.'], { env, signal }),
  ]);
  if (intended && !intended.ok) return readFailure(worktree, env, intended, signal);
  return {
    ok: true,
    baseTip: tip.tip,
    mergeBase: mb.exitCode === 0 ? mb.stdout.trim() : EMPTY_TREE,
    head: head.head,
    env,
    untracked: new Set(others.out.split('\0').filter(Boolean)),
  };
}
