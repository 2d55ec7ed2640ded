import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, unlinkSync, appendFileSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { git } from '../daemon/git/run.ts';
import { writeIntent } from '../daemon/tasks/journal.ts';
import { fail, type Fail, type Result } from './result.ts';

export const WORKTREES_DIR = '.grove/worktrees';
const SLUG_MAX = 48;

export interface CreateWorktreeInput {
  /** the project's canonical root */
  repo: string;
  /** the slug made from the task name; suffixed -2, -3… on collision */
  slug: string;
  /** an explicit branch name; default grove/<slug> */
  branch?: string;
  /** a ref to start from; default the repository's current branch */
  base?: string;
  /** worktree paths (relative) that live tasks hold */
  taken: string[];
  /** where to record what is about to be made, before git makes it (see daemon/journal.ts) */
  intent?: { id: string; file: string };
}

export interface CreatedWorktree {
  branch: string;
  worktree_path: string;
  base: string;
  base_commit: string;
}

function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim() !== '') ?? '').replace(/^(fatal|error): /, '');
}

// The slug with its collision suffix, still within SLUG_MAX characters.
function suffixed(slug: string, n: number): string {
  if (n === 1) return slug;
  const tail = `-${n}`;
  return slug.slice(0, SLUG_MAX - tail.length).replace(/-+$/, '') + tail;
}

// A real folder, created if missing; a symlink here could send worktrees anywhere.
function ensureRealDir(dir: string): string | null {
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink() || !st.isDirectory()) return `${dir} exists and is not a folder (a symlink or a file); grove will not use it`;
    return null;
  } catch {
    mkdirSync(dir, { mode: 0o755 });
    return null;
  }
}

// `/.grove/` in the repository's info/exclude, once, so the main checkout's status stays clean.
function ensureExcluded(commonDir: string): void {
  const infoDir = path.join(commonDir, 'info');
  const file = path.join(infoDir, 'exclude');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (text.split('\n').some((l) => l.trim() === '/.grove/')) return;
  mkdirSync(infoDir, { recursive: true });
  appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}/.grove/\n`);
}

interface RepoInfo {
  commonDir: string;
  /** null in a repository without commits */
  head: { commit: string; ref: string } | null;
}

// One git call for what every creation needs: the common git dir, HEAD's commit and its
// branch. Each git process costs a fork of this (large) process, so calls are kept few.
async function repoInfo(repo: string): Promise<RepoInfo | string> {
  const res = await git(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir', 'HEAD', '--symbolic-full-name', 'HEAD']);
  const [commonDir, commit, ref] = res.stdout.split('\n');
  if (!commonDir) return firstLine(res.stderr);
  if (res.exitCode !== 0 || !commit || !/^[0-9a-f]{40,64}$/.test(commit)) return { commonDir, head: null };
  return { commonDir, head: { commit, ref: ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : 'HEAD' } };
}

// git's own rules for a new branch name, plus the forms git would expand (`@{-1}`) or misread.
async function checkBranchName(repo: string, b: string): Promise<Fail | null> {
  const bad = fail('VALIDATION_FAILED', `${JSON.stringify(b)} is not a valid branch name`, '/branch');
  if (b === 'HEAD' || b.includes('@{') || b.startsWith('-')) return bad;
  const chk = await git(repo, ['check-ref-format', '--branch', b]);
  return chk.exitCode !== 0 || chk.stdout !== b ? bad : null;
}

// A given base as a commit; refused unless it names exactly one commit.
async function resolveBase(repo: string, given: string): Promise<Result<{ base: string; base_commit: string }>> {
  const resolved = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${given}^{commit}`]);
  if (resolved.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(resolved.stdout)) {
    return fail('BASE_NOT_FOUND', `${JSON.stringify(given)} is not a commit in ${repo}`, '/base');
  }
  return { ok: true, base: given, base_commit: resolved.stdout };
}

// Whether `branch` can be created next to the existing refs (no equal name, no D/F conflict).
function branchFree(branch: string, refs: Set<string>): boolean {
  const full = `refs/heads/${branch}`;
  if (refs.has(full)) return false;
  for (const r of refs) if (r.startsWith(full + '/')) return false;
  const parts = branch.split('/');
  for (let i = 1; i < parts.length; i++) if (refs.has(`refs/heads/${parts.slice(0, i).join('/')}`)) return false;
  return true;
}

// Creates the task's branch and worktree; on any failure nothing is left behind.
export async function createWorktree(input: CreateWorktreeInput): Promise<Result<CreatedWorktree>> {
  const { repo } = input;
  // Independent look-ups run side by side: each git call costs a process start.
  const [branchCheck, given, info, refsOut] = await Promise.all([
    input.branch === undefined ? null : checkBranchName(repo, input.branch),
    input.base === undefined ? null : resolveBase(repo, input.base),
    repoInfo(repo),
    git(repo, ['for-each-ref', '--format=%(refname)', 'refs/heads/']),
  ]);
  if (branchCheck) return branchCheck;
  if (typeof info === 'string') return fail('INTERNAL', `git rev-parse failed in ${repo}: ${info}`);
  let base: string;
  let baseCommit: string;
  if (given) {
    if (!given.ok) return given;
    ({ base, base_commit: baseCommit } = given);
  } else {
    if (!info.head) return fail('BASE_NOT_FOUND', 'the repository has no commit to start from');
    ({ ref: base, commit: baseCommit } = info.head);
  }
  ensureExcluded(info.commonDir);

  const unsafe = ensureRealDir(path.join(repo, '.grove')) ?? ensureRealDir(path.join(repo, WORKTREES_DIR));
  if (unsafe) return fail('CONFIG_INVALID', unsafe);

  const refs = new Set(refsOut.stdout.split('\n').filter(Boolean));
  const taken = new Set(input.taken);
  if (input.branch !== undefined && !branchFree(input.branch, refs)) {
    return fail('BRANCH_EXISTS', `branch ${input.branch} exists already, or clashes with an existing branch's path`, '/branch');
  }

  let branch = '';
  let rel = '';
  for (let n = 1; ; n++) {
    const slug = suffixed(input.slug, n);
    rel = `${WORKTREES_DIR}/${slug}/`;
    branch = input.branch ?? `grove/${slug}`;
    if (taken.has(rel) || existsSync(path.join(repo, rel)) || isLink(path.join(repo, WORKTREES_DIR, slug))) continue;
    if (input.branch === undefined && !branchFree(branch, refs)) continue;
    break;
  }
  const abs = path.join(repo, rel);

  if (input.intent) {
    try {
      writeIntent(input.intent.file, { id: input.intent.id, repo, branch, worktree_path: rel, base_commit: baseCommit });
    } catch (err) {
      rmSync(input.intent.file, { force: true });
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return fail('INSUFFICIENT_STORAGE', 'the disk of the data folder is full; free space and try again');
      return fail('INTERNAL', `recording the creation failed: ${e.message}`);
    }
  }
  const add = await withLockRetry(() => git(repo, ['worktree', 'add', '--quiet', '--no-track', '-b', branch, '--', abs, baseCommit]));
  if (add.exitCode !== 0) {
    await undoCreate(repo, abs, branch, refs);
    if (input.intent) rmSync(input.intent.file, { force: true });
    const msg = firstLine(add.stderr);
    const lock = foreignLock(add.stderr);
    if (lock) return lockedFail(lock);
    if (/already exists/.test(msg) && /branch/i.test(msg)) return fail('BRANCH_EXISTS', msg, '/branch');
    if (/cannot lock ref/.test(msg)) return fail('BRANCH_EXISTS', msg, '/branch');
    return fail('INTERNAL', `git worktree add failed: ${msg}`);
  }
  return { ok: true, branch, worktree_path: rel, base, base_commit: baseCommit };
}

// The lock file another git process holds, from git's "Unable to create '…lock': File exists".
function foreignLock(stderr: string): string | null {
  return /Unable to create '([^']+\.lock)': File exists/.exec(stderr)?.[1] ?? null;
}

// grove never removes someone else's lock: it may belong to a live git (an editor, an IDE).
function lockedFail(lock: string): Fail {
  return fail(
    'REPO_LOCKED',
    `${lock} exists: another git process holds a lock in this repository; grove waited and left it alone. ` +
      'If no git process is running, remove the file and try again',
  );
}

// How long a git call may wait, in total, for a foreign lock to go away before giving up.
export const LOCK_WAIT_MS = 3000;
const LOCK_TRIES = 4;

// Runs a git call again when it failed only on a lock file that another process holds, each
// time after that file is gone (or a bounded wait): a short-lived lock from an editor's
// `git status` should not fail a task, a stuck one must not hang it.
async function withLockRetry<T extends { exitCode: number; stderr: string }>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    const res = await run();
    const lock = res.exitCode === 0 ? null : foreignLock(res.stderr);
    const left = deadline - Date.now();
    if (!lock || attempt >= LOCK_TRIES || left <= 0) return res;
    await lockGone(lock, Math.min(left, LOCK_WAIT_MS / (LOCK_TRIES - 1)));
  }
}

// Resolves when `lock` no longer exists or after `ms`, watching its folder rather than polling.
function lockGone(lock: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | null = null;
    const finish = () => {
      clearTimeout(timer);
      watcher?.close();
      resolve();
    };
    const timer = setTimeout(finish, ms);
    try {
      watcher = watch(path.dirname(lock), () => {
        if (!existsSync(lock)) finish();
      });
      watcher.on('error', finish);
    } catch {
      // the folder itself is gone: so is the lock
      return finish();
    }
    if (!existsSync(lock)) finish();
  });
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

// Removes what a failed `worktree add` may have left: its folder, its registration, its branch.
async function undoCreate(repo: string, abs: string, branch: string, refsBefore: Set<string>): Promise<void> {
  if (existsSync(abs) && !isLink(abs)) rmSync(abs, { recursive: true, force: true });
  await git(repo, ['worktree', 'prune']);
  if (!refsBefore.has(`refs/heads/${branch}`)) {
    const now = await git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    if (now.exitCode === 0) await git(repo, ['branch', '-D', '--', branch]);
  }
}

export interface RemoveWorktreeInput {
  repo: string;
  worktree_path: string;
  force: boolean;
  /** also delete the branch (only to undo a creation) */
  deleteBranch?: string;
  /** delete it only if it still points at this commit */
  deleteBranchAt?: string;
}

// Removes a task's worktree, keeping its branch; refuses uncommitted work unless forced.
// It never follows a symlink: a linked folder is unlinked, its target left alone.
export type RemovedWorktree = { removed: 'worktree' | 'link' | 'missing' | 'foreign' };

export async function removeWorktree(input: RemoveWorktreeInput): Promise<Result<RemovedWorktree>> {
  const { repo } = input;
  const rel = input.worktree_path.replace(/\/+$/, '');
  if (!rel.startsWith(`${WORKTREES_DIR}/`) || rel.split('/').includes('..') || rel.split('/').length !== 3) {
    return fail('INTERNAL', `refusing to remove ${input.worktree_path}: not a grove worktree path`);
  }
  const abs = path.join(repo, rel);
  let removed: 'worktree' | 'link' | 'missing' | 'foreign';

  // Any symlink on the way (.grove, .grove/worktrees, the folder itself) means: touch nothing behind it.
  const parentsReal = !isLink(path.join(repo, '.grove')) && !isLink(path.join(repo, WORKTREES_DIR));
  let st = null;
  try {
    st = lstatSync(abs);
  } catch {
    st = null;
  }
  if (!parentsReal) {
    removed = 'foreign';
  } else if (st === null) {
    removed = 'missing';
  } else if (st.isSymbolicLink()) {
    unlinkSync(abs);
    removed = 'link';
  } else if (!st.isDirectory() || !(await isWorktreeRoot(abs))) {
    removed = 'foreign';
  } else {
    if (!input.force) {
      const status = await git(abs, ['status', '--porcelain=v1', '--untracked-files=all']);
      if (status.exitCode !== 0) return fail('INTERNAL', `git status failed: ${firstLine(status.stderr)}`);
      if (status.stdout !== '') {
        const files = status.stdout.split('\n').slice(0, 10).map((l) => l.slice(3));
        return fail('WORKTREE_DIRTY', `the worktree has uncommitted or untracked changes (${files.join(', ')}); use force=true to discard them`);
      }
    }
    const rm = await withLockRetry(() => git(repo, ['worktree', 'remove', ...(input.force ? ['--force', '--force'] : []), '--', abs]));
    if (rm.exitCode !== 0) {
      const msg = firstLine(rm.stderr);
      const lock = foreignLock(rm.stderr);
      if (lock) return lockedFail(lock);
      if (/contains modified or untracked files/.test(msg)) return fail('WORKTREE_DIRTY', msg);
      if (/locked working tree/.test(msg)) {
        return fail('REPO_LOCKED', `${msg}: it was locked with \`git worktree lock\`; unlock it, or archive with force=true`);
      }
      return fail('INTERNAL', `git worktree remove failed: ${msg}`);
    }
    removed = 'worktree';
  }
  // What is left is safe to repeat: the worktree is gone, and a branch is deleted only as named.
  await git(repo, ['worktree', 'prune']);
  if (input.deleteBranch) {
    // Only while the branch is still where the creation put it: a commit on it is someone's work.
    if (input.deleteBranchAt) await git(repo, ['update-ref', '-d', `refs/heads/${input.deleteBranch}`, input.deleteBranchAt]);
    else await git(repo, ['branch', '-D', '--', input.deleteBranch]);
  }
  return { ok: true, removed };
}

// True when `dir` is the top of a git work tree itself, not a folder inside the main checkout.
async function isWorktreeRoot(dir: string): Promise<boolean> {
  const top = await git(dir, ['rev-parse', '--show-toplevel']);
  if (top.exitCode !== 0) return false;
  try {
    return realpathSync(top.stdout) === realpathSync(dir);
  } catch {
    return false;
  }
}
