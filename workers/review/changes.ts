import type { ChangedFile, Changes, FileStatus, Side } from '../../schemas/review.ts';
import { git } from '../../daemon/git/run.ts';
import { fail, type Result } from '../result.ts';
import { withScratch, type Scratch } from './scratch.ts';
import { gitOut, readFailure, snapshot } from './snapshot.ts';
import { diffRange } from './turn.ts';

export interface ChangesInput {
  worktree: string;
  base: string;
  /** the task's id: its turns are refs/grove/turns/<task>/<n> (without it, no turn is found) */
  task?: string;
  /** the range compared (DESIGN §17): default the merge-base to the working state */
  from?: Side;
  to?: Side;
  /** the daemon's scratch folder, where a read keeps what it makes */
  scratch: string;
}

const STATUS: Record<string, FileStatus> = { A: 'added', M: 'modified', T: 'modified', D: 'deleted', R: 'renamed', C: 'added' };

type Stat = Pick<ChangedFile, 'additions' | 'deletions' | 'binary'>;

// `git diff -z --raw --numstat`: first `:<modes> <oids> X\0path\0` per file (a rename:
// `... R<score>\0old\0new\0`), then `adds\tdels\tpath\0` (a rename: `adds\tdels\t\0old\0new\0`).
function parseRawNumstat(out: string): { files: Array<{ code: string; path: string; old_path?: string }>; stats: Map<string, Stat> } {
  const files: Array<{ code: string; path: string; old_path?: string }> = [];
  const stats = new Map<string, Stat>();
  const parts = out.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const rec = parts[i]!;
    if (rec === '') continue;
    if (rec.startsWith(':')) {
      const code = rec.slice(rec.lastIndexOf(' ') + 1).charAt(0);
      if (code === 'R' || code === 'C') files.push({ code, old_path: parts[++i]!, path: parts[++i]! });
      else files.push({ code, path: parts[++i]! });
      continue;
    }
    const [a, d, p] = rec.split('\t') as [string, string, string];
    const file = p !== '' ? p : ((i += 2), parts[i]!);
    stats.set(file, { additions: a === '-' ? 0 : Number(a), deletions: d === '-' ? 0 : Number(d), binary: a === '-' });
  }
  return { files, stats };
}

// GET /api/tasks/:id/changes: what the task changed since the merge-base with its base,
// committed or not, untracked files included; the repository is only read.
export function taskChanges(input: ChangesInput, signal?: AbortSignal): Promise<Result<Changes>> {
  return withScratch(input.scratch, input.worktree, (scratch) => changesIn(input, scratch, signal), signal);
}

async function changesIn(input: ChangesInput, scratch: Scratch, signal: AbortSignal | undefined): Promise<Result<Changes>> {
  const snap = await snapshot(input.worktree, input.base, scratch, signal);
  if (!snap.ok) return snap;
  // Each `git diff <commit>` compares that commit with the working state.
  const opts = { env: snap.env, signal };
  const range = await diffRange(input, snap.mergeBase, scratch, signal);
  if (!range.ok) return range.code === 'TURN_NOT_FOUND' ? range : readFailure(input.worktree, snap.env, range, signal);
  const [changed, counts, dirty] = await Promise.all([
    gitOut(input.worktree, ['diff', '-z', '-M', '--no-textconv', '--raw', '--numstat', ...range.revs], opts),
    git(input.worktree, ['rev-list', '--left-right', '--count', `${snap.baseTip}...${snap.head}`], opts),
    gitOut(input.worktree, ['diff', '-z', '--name-only', snap.head], opts),
  ]);
  if (!changed.ok) return readFailure(input.worktree, snap.env, changed, signal);
  if (!dirty.ok) return readFailure(input.worktree, snap.env, dirty, signal);
  if (counts.exitCode !== 0) return fail('INTERNAL', `git rev-list failed: ${counts.stderr}`);
  const [behind, ahead] = counts.stdout.trim().split(/\s+/).map(Number) as [number, number];
  const { files: named, stats } = parseRawNumstat(changed.out);
  const files = named.map((f): ChangedFile => {
    const status = range.toWork && f.code === 'A' && snap.untracked.has(f.path) ? 'untracked' : (STATUS[f.code] ?? 'modified');
    const s = stats.get(f.path) ?? { additions: 0, deletions: 0, binary: false };
    return { path: f.path, ...(f.old_path !== undefined && f.code === 'R' ? { old_path: f.old_path } : {}), status, ...s };
  });
  return {
    ok: true,
    base: input.base,
    merge_base: snap.mergeBase,
    head: snap.head,
    ahead,
    behind,
    uncommitted: dirty.out.split('\0').filter(Boolean).length,
    files,
  };
}
