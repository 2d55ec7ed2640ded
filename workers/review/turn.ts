import path from 'node:path';
import type { Side, Turn } from '../../schemas/review.ts';
import { git } from '../../daemon/git/run.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';
import { foreignLock, lockedFail, withLockRetry } from '../worktree/locks.ts';
import { copyIndex, privateDir, type Scratch } from './scratch.ts';
import { gitOut, headOf, workingTree } from './snapshot.ts';

// Turns (DESIGN §17): the worktree's whole state when an agent session ended, kept as a commit
// under refs/grove/turns/<task id>/<n>, laid out as `git stash` lays out its own: the commit's
// tree is the working state (committed, uncommitted and untracked; ignored excluded), its first
// parent HEAD then, its second parent a commit of the index's tree. The index tree is what lets a
// restore give back staged, unstaged and untracked files as each was: untracked = in the working
// tree and not in the index.
export const TURNS_REF = 'refs/grove/turns';

// Turn commits are grove's, whatever identity the repository has (or lacks).
const IDENTITY = { GIT_AUTHOR_NAME: 'grove', GIT_AUTHOR_EMAIL: 'grove@localhost', GIT_COMMITTER_NAME: 'grove', GIT_COMMITTER_EMAIL: 'grove@localhost' };

export interface TurnInput {
  worktree: string;
  task: string;
  /** the daemon's scratch folder: the index copies are made there */
  scratch: string;
}

export interface RecordInput extends TurnInput {
  /** the agent session whose end this records */
  session_id?: string;
}

const refOf = (task: string, n: number) => `${TURNS_REF}/${task}/${n}`;

// The task's turns as git holds them, oldest first, in one git call: what is not in the ref and
// its commit (the session, the turn a restore saved the state before, the files changed since
// the previous turn) is in the commit message's trailers.
export async function listTurns(input: Pick<TurnInput, 'worktree' | 'task'>, signal?: AbortSignal): Promise<Result<{ turns: Turn[] }>> {
  const refs = await gitOut(input.worktree, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(committerdate:unix)%00%(parent)%00%(contents:body)%00%00', `${TURNS_REF}/${input.task}/`], { signal });
  if (!refs.ok) return refs;
  const rows = refs.out
    .split('\0\0\n')
    .filter((r) => r !== '')
    .map((r) => {
      const [ref, commit, at, parents, body] = r.split('\0') as [string, string, string, string, string];
      return { n: Number(ref.slice(ref.lastIndexOf('/') + 1)), commit, at: Number(at), head: parents.split(' ')[0]!, body };
    })
    .filter((r) => Number.isInteger(r.n) && r.n > 0)
    .sort((a, b) => a.n - b.n);
  const turns: Turn[] = [];
  for (const r of rows) {
    const session = /^Grove-Session: ([0-9a-f-]{36})$/m.exec(r.body);
    const restored = /^Grove-Restored: (\d+)$/m.exec(r.body);
    turns.push({
      n: r.n,
      commit: r.commit,
      session_id: session ? session[1]! : null,
      restored: restored ? Number(restored[1]) : null,
      head: r.head,
      at: new Date(r.at * 1000).toISOString(),
      files: Number(/^Grove-Files: (\d+)$/m.exec(r.body)?.[1] ?? 0),
    });
  }
  return { ok: true, turns };
}

// The task's newest turn, by number (none yet: null), in one git call.
async function lastTurn(worktree: string, task: string, signal?: AbortSignal): Promise<Result<{ turn: { n: number; commit: string } | null }>> {
  const refs = await gitOut(worktree, ['for-each-ref', '--format=%(refname) %(objectname)', `${TURNS_REF}/${task}/`], { signal });
  if (!refs.ok) return refs;
  let turn: { n: number; commit: string } | null = null;
  for (const line of refs.out.split('\n')) {
    const [ref, commit] = line.split(' ') as [string, string];
    const n = Number(ref.slice(ref.lastIndexOf('/') + 1));
    if (line !== '' && Number.isInteger(n) && n > (turn?.n ?? 0)) turn = { n, commit };
  }
  return { ok: true, turn };
}

// The commit of turn `n`, or TURN_NOT_FOUND.
export async function turnCommit(worktree: string, task: string, n: number, signal?: AbortSignal): Promise<Result<{ commit: string }>> {
  const r = await git(worktree, ['rev-parse', '--verify', '--quiet', `${refOf(task, n)}^{commit}`], { signal });
  if (r.exitCode !== 0) return fail('TURN_NOT_FOUND', `the task has no turn ${n}`);
  return { ok: true, commit: r.stdout.trim() };
}

// A scratch that writes its objects into the repository (a turn is kept), with its index copies
// in `dir` named after `name`; `last` is the latest copy it made.
function keepingScratch(dir: string, name: string): Scratch & { last: () => string } {
  let copies = 0;
  let last = '';
  return {
    env: {},
    indexCopy: (index) => (last = copyIndex(index, path.join(dir, `${name}-${copies++}`))),
    last: () => last,
  };
}

// The index's tree, written from a copy (write-tree stores its cache in the index it reads). An
// index in the middle of a merge has no tree: then its tracked files as they are in the worktree.
async function indexTree(worktree: string, scratch: Scratch, index: string, signal?: AbortSignal): Promise<Result<{ tree: string }>> {
  const env = { GIT_INDEX_FILE: scratch.indexCopy(index) };
  const tree = await git(worktree, ['write-tree'], { env, signal });
  if (tree.exitCode === 0) return { ok: true, tree: tree.stdout.trim() };
  const add = await gitOut(worktree, ['add', '--update', '--', '.'], { env, signal });
  if (!add.ok) return add;
  const again = await gitOut(worktree, ['write-tree'], { env, signal });
  return again.ok ? { ok: true, tree: again.out.trim() } : again;
}

// Records the worktree's state as the task's next turn; the branch, the index and the files are
// untouched. `keep` is the index copy holding the recorded working tree (with the files' stats),
// for a restore to start from; it lives as long as `dir`.
async function recordIn(
  input: RecordInput & { restored?: number },
  dir: string,
  signal: AbortSignal | undefined,
): Promise<Result<{ turn: Turn; tree: string; keep: string }>> {
  const { worktree, task } = input;
  // Independent git calls run side by side: each costs a fork.
  const [head, last] = await Promise.all([headOf(worktree, signal), lastTurn(worktree, task, signal)]);
  if (!head.ok) return head;
  if (!last.ok) return last;
  // The working tree and the index's commit side by side, each in index copies of its own.
  const workScratch = keepingScratch(dir, 'work');
  const env = IDENTITY;
  const indexCommit = async (): Promise<Result<{ out: string }>> => {
    const index = await indexTree(worktree, keepingScratch(dir, 'index'), head.index, signal);
    return index.ok ? gitOut(worktree, ['commit-tree', index.tree, '-p', head.head, '-m', 'index'], { env, signal }) : index;
  };
  // What changed since the previous turn, asked as soon as the working tree is written.
  const changed = (tree: string, prev: { commit: string } | null) => gitOut(worktree, ['diff-tree', '-r', '--name-only', '-z', '--no-renames', prev?.commit ?? head.head, tree], { signal });
  const work = workingTree(worktree, workScratch, head.index, signal);
  const [w, ic, firstChanged] = await Promise.all([work, indexCommit(), work.then((x) => (x.ok ? changed(x.tree, last.turn) : x))]);
  if (!w.ok) return w;
  if (!ic.ok) return ic;
  const keep = workScratch.last();
  const parents = ['-p', head.head, '-p', ic.out.trim()];
  const origin = input.session_id !== undefined ? `Grove-Session: ${input.session_id}` : `Grove-Restored: ${input.restored}`;
  // The next number; a ref that appeared meanwhile (another end of the same task) is never
  // overwritten: update-ref with the zero id as the old value creates it or fails, and the turn
  // is made again on the newer one.
  let prev = last.turn;
  for (let tries = 0; tries < 5; tries++) {
    const n = (prev?.n ?? 0) + 1;
    const files = prev === last.turn ? firstChanged : await changed(w.tree, prev);
    if (!files.ok) return files;
    const count = files.out.split('\0').filter(Boolean).length;
    // A whole second as the commit's date, so that the date listed is the one answered now.
    const at = Math.floor(Date.now() / 1000);
    const env = { ...IDENTITY, GIT_AUTHOR_DATE: `${at} +0000`, GIT_COMMITTER_DATE: `${at} +0000` };
    const wc = await gitOut(worktree, ['commit-tree', w.tree, ...parents, '-m', 'grove turn', '-m', `${origin}\nGrove-Files: ${count}`], { env, signal });
    if (!wc.ok) return wc;
    const commit = wc.out.trim();
    // The zero id of the repository's hash (SHA-1 or SHA-256) as the old value: create, never move.
    const made = await git(worktree, ['update-ref', '-m', 'grove turn', refOf(task, n), commit, '0'.repeat(commit.length)], { signal });
    if (made.exitCode !== 0) {
      if (signal?.aborted) return fail('INTERNAL', `git update-ref failed: ${firstLine(made.stderr)}`);
      const again = await lastTurn(worktree, task, signal);
      if (!again.ok) return again;
      prev = again.turn;
      continue;
    }
    const turn: Turn = {
      n,
      commit,
      session_id: input.session_id ?? null,
      restored: input.restored ?? null,
      head: head.head,
      at: new Date(at * 1000).toISOString(),
      files: count,
    };
    return { ok: true, turn, tree: w.tree, keep };
  }
  return fail('INTERNAL', `could not make a ref under ${TURNS_REF}/${task}/: another writer kept taking the number`);
}

// At the end of an agent session: the worktree's state as the task's next turn.
export async function recordTurn(input: RecordInput, signal?: AbortSignal): Promise<Result<{ turn: Turn }>> {
  const dir = privateDir(input.scratch);
  try {
    const res = await recordIn(input, dir.dir, signal);
    return res.ok ? { ok: true, turn: res.turn } : res;
  } finally {
    dir.dispose();
  }
}

// POST /api/tasks/:id/restore: the present state saved as a turn first (restoring that one undoes
// this), then the files and the index made those of turn `turn`; HEAD and the branch never move.
// Only files that differ are written; files of the present state that turn `turn` lacks are
// removed; ignored files are left alone (neither state holds them).
export async function restoreTurn(input: TurnInput & { turn: number }, signal?: AbortSignal): Promise<Result<{ saved: Turn; restored: Turn }>> {
  const { worktree, task } = input;
  const target = await turnCommit(worktree, task, input.turn, signal);
  if (!target.ok) return target;
  const trees = await gitOut(worktree, ['rev-parse', `${target.commit}^{tree}`, `${target.commit}^2^{tree}`], { signal });
  if (!trees.ok) return fail('TURN_NOT_FOUND', `turn ${input.turn} is not a commit grove made: it has no index`);
  const [workTree, indexTree] = trees.out.trim().split('\n') as [string, string];
  const dir = privateDir(input.scratch);
  try {
    const saved = await recordIn({ ...input, restored: input.turn }, dir.dir, signal);
    if (!saved.ok) return saved;
    // The copy that holds the present state (with its stats) moves to the turn's tree: git writes
    // the files that differ and removes those the turn lacks, and the worktree's index is not read.
    const files = await gitOut(worktree, ['read-tree', '--reset', '-u', saved.tree, workTree], { env: { GIT_INDEX_FILE: saved.keep }, signal });
    if (!files.ok) return files;
    // The worktree's own index last, waiting a little for another git's lock on it.
    const index = await withLockRetry(() => git(worktree, ['read-tree', indexTree], { signal }));
    if (index.exitCode !== 0) {
      const lock = foreignLock(index.stderr);
      const undo = `the files are turn ${input.turn}'s, the index is not: restore turn ${saved.turn.n} to undo`;
      return lock ? { ...lockedFail(lock), message: `${lockedFail(lock).message}; ${undo}` } : fail('INTERNAL', `git read-tree failed: ${firstLine(index.stderr)}; ${undo}`);
    }
    // Fresh stats for the files just written, so that the next status need not read them all;
    // it exits non-zero when some file differs from the index, which is the state restored.
    await git(worktree, ['update-index', '-q', '--refresh'], { signal });
    const listed = await listTurns({ worktree, task }, signal);
    if (!listed.ok) return listed;
    const restored = listed.turns.find((t) => t.n === input.turn);
    if (!restored) return fail('TURN_NOT_FOUND', `turn ${input.turn} went while it was restored`);
    return { ok: true, saved: saved.turn, restored };
  } finally {
    dir.dispose();
  }
}

// When the task is archived: its turns' refs go (the branch stays).
export async function dropTurns(input: { repo: string; task: string }, signal?: AbortSignal): Promise<Result<{ dropped: number }>> {
  const refs = await gitOut(input.repo, ['for-each-ref', '--format=%(refname)', `${TURNS_REF}/${input.task}/`], { signal });
  if (!refs.ok) return refs;
  const names = refs.out.split('\n').filter(Boolean);
  if (names.length === 0) return { ok: true, dropped: 0 };
  const del = await git(input.repo, ['update-ref', '--stdin'], { input: names.map((r) => `delete ${r}\n`).join(''), signal });
  if (del.exitCode !== 0) return fail('INTERNAL', `git update-ref failed: ${firstLine(del.stderr)}`);
  return { ok: true, dropped: names.length };
}

// One end of a changes/diff range as a revision `git diff` takes; `work` is the working state,
// whose tree is written in the read's scratch (the other side then needs none).
export async function sideRev(worktree: string, task: string, side: Exclude<Side, 'base'>, scratch: Scratch, signal?: AbortSignal): Promise<Result<{ rev: string }>> {
  if (side === 'work') {
    const head = await headOf(worktree, signal);
    if (!head.ok) return head;
    const tree = await workingTree(worktree, scratch, head.index, signal);
    return tree.ok ? { ok: true, rev: tree.tree } : tree;
  }
  const c = await turnCommit(worktree, task, side.turn, signal);
  return c.ok ? { ok: true, rev: c.commit } : c;
}

// What changes and diff compare (DESIGN §17): from (default the merge-base) to (default the
// working state) as `git diff` revisions; with `toWork` a single one, compared with the worktree.
export async function diffRange(
  input: { worktree: string; task?: string | undefined; from?: Side | undefined; to?: Side | undefined },
  mergeBase: string,
  scratch: Scratch,
  signal?: AbortSignal,
): Promise<Result<{ revs: string[]; toWork: boolean }>> {
  const rev = async (side: Side): Promise<Result<{ rev: string }>> => {
    if (side === 'base') return { ok: true, rev: mergeBase };
    if (side !== 'work' && input.task === undefined) return fail('TURN_NOT_FOUND', `no task named: no turn ${side.turn}`);
    return sideRev(input.worktree, input.task ?? '', side, scratch, signal);
  };
  const from = await rev(input.from ?? 'base');
  if (!from.ok) return from;
  const to = input.to ?? 'work';
  if (to === 'work') return { ok: true, revs: [from.rev], toWork: true };
  const end = await rev(to);
  if (!end.ok) return end;
  return { ok: true, revs: [from.rev, end.rev], toWork: false };
}
