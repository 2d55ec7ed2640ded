import { existsSync, lstatSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { git as run, type Git } from '../../daemon/git/run.ts';
import type { LandingIntent, MergeIntent, RebaseIntent } from '../../schemas/journal.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';
import { NO_EDITOR } from './rebase.ts';
import { dirtyFiles, gitOut } from './snapshot.ts';

/**
 * finished: the landing had completed, or was completed now; undone: the checkout is back as it
 * was; gone: its checkout no longer exists; moved: its branch or checkout moved on since, so grove
 * touched nothing. `kept`: changed files that are not grove's, left as they are.
 */
export interface Recovered {
  outcome: 'finished' | 'undone' | 'gone' | 'moved';
  kept: string[];
  /** a rebase that had ended: the branch's tip it left */
  head?: string;
}

// What a killed rebase or merge left, finished or undone from its intent (daemon/journal/landing.ts).
// Lock files are removed only here, where the intent says grove's git was in flight. `signal`
// bounds it (a filter may hang here as in the landing): its first stopped git ends it, before
// anything is decided on what that git did not say, and the intent is kept for the next try.
export async function recoverLanding(intent: LandingIntent, signal?: AbortSignal): Promise<Result<Recovered>> {
  const git: Git = async (cwd, args, opts = {}) => {
    const r = await run(cwd, args, { ...opts, signal });
    if (r.stopped) throw new Stopped();
    return r;
  };
  try {
    const res = await (intent.kind === 'rebase' ? recoverRebase(intent, git, signal) : recoverMerge(intent, git, signal));
    return signal?.aborted ? fail('GIT_TIMEOUT', 'putting right an interrupted landing was stopped') : res;
  } catch (err) {
    if (err instanceof Stopped) return fail('GIT_TIMEOUT', 'putting right an interrupted landing was stopped');
    throw err;
  }
}

class Stopped extends Error {}

// The pseudo-refs a rebase writes in the worktree's own git dir, each under a lock file.
const REBASE_REFS = ['HEAD', 'ORIG_HEAD', 'REBASE_HEAD', 'AUTO_MERGE', 'CHERRY_PICK_HEAD'];
const EMPTY = /^0+$/;

// A rebase is undone: git's own abort when its state folder is there, then the branch at the
// recorded head, checked out, and the files the rebase could have written as at that head.
async function recoverRebase(i: RebaseIntent, git: Git, signal?: AbortSignal): Promise<Result<Recovered>> {
  if (!existsSync(i.worktree)) return { ok: true, outcome: 'gone', kept: [] };
  const where = await gitPaths(i.worktree, ['rebase-merge', 'rebase-apply', 'index', ...REBASE_REFS, ...(i.branch ? [i.branch] : [])], signal);
  if (!where.ok) return where;
  const [merge, apply, ...locked] = where.paths;
  for (const p of locked) rmSync(`${p}.lock`, { force: true });
  const ref = i.branch ?? 'HEAD';
  if (existsSync(merge!) || existsSync(apply!)) {
    const abort = await git(i.worktree, ['rebase', '--abort'], { env: NO_EDITOR });
    // State git cannot abort from (cut short while written): the steps below do what abort does.
    if (abort.exitCode !== 0) for (const dir of [merge!, apply!]) rmSync(dir, { recursive: true, force: true });
  } else {
    const at = await revParse(git, i.worktree, ref);
    if (at !== i.head) {
      // git moves the branch only once every commit is replayed: that rebase had ended, and left
      // the branch on `onto`. A branch elsewhere was moved by someone else since.
      if (at !== null && (await git(i.worktree, ['merge-base', '--is-ancestor', i.onto, at])).exitCode === 0) return { ok: true, outcome: 'finished', kept: [], head: at };
      return { ok: true, outcome: 'moved', kept: [] };
    }
  }
  if ((await revParse(git, i.worktree, ref)) !== i.head) {
    const moved = await git(i.worktree, ['update-ref', ...(i.branch ? [] : ['--no-deref']), '-m', 'grove: undo an interrupted rebase', ref, i.head]);
    if (moved.exitCode !== 0) return fail('INTERNAL', `putting ${ref} back at ${i.head} failed: ${firstLine(moved.stderr)}`);
  }
  if (i.branch) {
    const attached = await git(i.worktree, ['symbolic-ref', 'HEAD', i.branch]);
    if (attached.exitCode !== 0) return fail('INTERNAL', `checking ${i.branch} out again failed: ${firstLine(attached.stderr)}`);
  }
  const dirty = await dirtyFiles(i.worktree, { untracked: true, signal });
  if (!dirty.ok) return dirty;
  if (dirty.files.length === 0) return { ok: true, outcome: 'undone', kept: [] };
  // The worktree was clean when the rebase began: what differs now on the paths the rebase could
  // write (the base's changes and the task's own) is its doing; anything else is kept.
  const mergeBase = await git(i.worktree, ['merge-base', i.head, i.onto]);
  const touched = new Set<string>();
  for (const range of [[i.head, i.onto], mergeBase.exitCode === 0 ? [mergeBase.stdout.trim(), i.head] : []]) {
    if (range.length === 0) continue;
    const names = await gitOut(i.worktree, ['diff', '--name-only', '--no-renames', '-z', ...range], { signal });
    if (!names.ok) return names;
    for (const n of names.out.split('\0')) if (n) touched.add(n);
  }
  const ours = dirty.files.filter((f) => touched.has(f));
  const inHead = await gitOut(i.worktree, ['ls-tree', '-r', '-z', '--name-only', i.head], { signal });
  if (!inHead.ok) return inHead;
  const tracked = new Set(inHead.out.split('\0'));
  const restored = await restore(git, i.worktree, i.head, ours.filter((f) => tracked.has(f)));
  if (!restored.ok) return restored;
  for (const f of ours.filter((f) => !tracked.has(f))) removeFile(i.worktree, f);
  return { ok: true, outcome: 'undone', kept: dirty.files.filter((f) => !touched.has(f)) };
}

// A merge into a checked-out base is finished when the checkout's index already holds the merge
// (read-tree had ended: only the ref was left to move), else undone on the paths it changes.
async function recoverMerge(i: MergeIntent, git: Git, signal?: AbortSignal): Promise<Result<Recovered>> {
  if (!existsSync(i.checkout)) return { ok: true, outcome: 'gone', kept: [] };
  const at = await revParse(git, i.repo, i.ref);
  if (at === i.next) return { ok: true, outcome: 'finished', kept: [] };
  const head = await git(i.checkout, ['symbolic-ref', '--quiet', 'HEAD']);
  if (at !== i.old || head.stdout.trim() !== i.ref) return { ok: true, outcome: 'moved', kept: [] };

  const where = await gitPaths(i.checkout, ['index', 'HEAD', i.ref], signal);
  if (!where.ok) return where;
  for (const p of where.paths) rmSync(`${p}.lock`, { force: true });
  const [index, oldTree, nextTree] = await Promise.all([
    gitOut(i.checkout, ['write-tree'], { signal }),
    gitOut(i.checkout, ['rev-parse', `${i.old}^{tree}`], { signal }),
    gitOut(i.checkout, ['rev-parse', `${i.next}^{tree}`], { signal }),
  ]);
  if (!oldTree.ok) return oldTree;
  if (!nextTree.ok) return nextTree;
  const tree = index.ok ? index.out.trim() : null;
  if (tree === nextTree.out.trim()) {
    const moved = await git(i.repo, ['update-ref', '-m', 'grove: finish an interrupted merge', i.ref, i.next, i.old]);
    if (moved.exitCode !== 0) return fail('INTERNAL', `finishing the merge into ${i.ref} failed: ${firstLine(moved.stderr)}`);
    return { ok: true, outcome: 'finished', kept: [] };
  }
  if (tree !== oldTree.out.trim()) {
    return fail(
      'LANDING_INTERRUPTED',
      `a merge into ${i.ref} was cut short in ${i.checkout}, whose index has been changed since; grove leaves it to you. ` +
        `Once its index matches ${i.old} (\`git read-tree ${i.old}\` keeps your files) or ${i.next}, grove finishes its cleanup`,
    );
  }
  return undoMerge(i, git, signal);
}

// The index is still the old tip's: the files read-tree had written (the merge's content, or
// missing) go back; a file with other content is someone else's and stays.
async function undoMerge(i: MergeIntent, git: Git, signal?: AbortSignal): Promise<Result<Recovered>> {
  const [diff, dirty] = await Promise.all([
    gitOut(i.checkout, ['diff-tree', '-r', '-z', '--no-renames', i.old, i.next], { signal }),
    dirtyFiles(i.checkout, { untracked: true, signal }),
  ]);
  if (!diff.ok) return diff;
  if (!dirty.ok) return dirty;
  const changed = new Map<string, { inOld: boolean; next: string }>();
  const parts = diff.out.split('\0');
  for (let k = 0; k + 1 < parts.length; k += 2) {
    const [, , oldBlob, nextBlob] = parts[k]!.split(' ');
    changed.set(parts[k + 1]!, { inOld: !EMPTY.test(oldBlob!), next: nextBlob! });
  }
  const candidates = dirty.files.filter((f) => changed.has(f));
  const missing = new Set(candidates.filter((f) => !exists(path.join(i.checkout, f))));
  // One path a line for hash-object: a name with a newline in it is never taken for grove's.
  const present = candidates.filter((f) => !missing.has(f) && !f.includes('\n'));
  // As git would store them (clean filters applied), to compare with the merge's blobs.
  const hashed = present.length === 0 ? null : await git(i.checkout, ['hash-object', '--stdin-paths'], { input: present.join('\n') + '\n' });
  if (hashed && hashed.exitCode !== 0) return fail('INTERNAL', `reading the files of ${i.checkout} failed: ${firstLine(hashed.stderr)}`);
  const blobs = new Map(present.map((f, k) => [f, hashed!.stdout.split('\n')[k]]));
  const back: string[] = [];
  const remove: string[] = [];
  const kept = dirty.files.filter((f) => !changed.has(f));
  for (const f of candidates) {
    const { inOld, next } = changed.get(f)!;
    if (missing.has(f)) {
      if (inOld) back.push(f);
    } else if (blobs.get(f) !== next) kept.push(f);
    else if (inOld) back.push(f);
    else remove.push(f);
  }
  const restored = await restore(git, i.checkout, null, back);
  if (!restored.ok) return restored;
  for (const f of remove) removeFile(i.checkout, f);
  return { ok: true, outcome: 'undone', kept };
}

// Absolute paths in a checkout's git dirs (its own, or the common one for refs), in order.
async function gitPaths(dir: string, names: string[], signal?: AbortSignal): Promise<Result<{ paths: string[] }>> {
  const r = await gitOut(dir, ['rev-parse', '--path-format=absolute', ...names.flatMap((n) => ['--git-path', n])], { signal });
  return r.ok ? { ok: true, paths: r.out.split('\n') } : r;
}

async function revParse(git: Git, dir: string, ref: string): Promise<string | null> {
  const r = await git(dir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

// Files written again from a commit (or from the index when null), index entries with them.
async function restore(git: Git, dir: string, from: string | null, files: string[]): Promise<Result<object>> {
  if (files.length === 0) return { ok: true };
  const args = ['checkout', ...(from ? [from] : []), '--pathspec-from-file=-', '--pathspec-file-nul'];
  const r = await git(dir, args, { env: { GIT_LITERAL_PATHSPECS: '1' }, input: files.join('\0') });
  return r.exitCode === 0 ? { ok: true } : fail('INTERNAL', `restoring ${files.length} file(s) in ${dir} failed: ${firstLine(r.stderr)}`);
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

// A file grove's git wrote, removed with the folders it leaves empty (as git does).
function removeFile(root: string, rel: string): void {
  rmSync(path.join(root, rel), { force: true });
  for (let dir = path.dirname(path.join(root, rel)); dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    if (readdirSync(dir).length > 0) return;
    rmdirSync(dir);
  }
}
