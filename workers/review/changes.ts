import { git } from '../../daemon/git/run.ts';
import { fail, type Result } from '../result.ts';
import { gitOut, snapshot } from './snapshot.ts';

export interface ChangesInput {
  worktree: string;
  base: string;
}

export type FileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'untracked';

export interface ChangedFile {
  path: string;
  old_path?: string;
  status: FileStatus;
  additions: number;
  deletions: number;
  binary: boolean;
}

export interface Changes {
  base: string;
  merge_base: string;
  head: string;
  ahead: number;
  behind: number;
  /** how many files differ between HEAD and the worktree (untracked included) */
  uncommitted: number;
  files: ChangedFile[];
}

const STATUS: Record<string, FileStatus> = { A: 'added', M: 'modified', T: 'modified', D: 'deleted', R: 'renamed', C: 'added' };

// `git diff -z --numstat`: `adds\tdels\tpath\0`, or for a rename `adds\tdels\t\0old\0new\0`.
function parseNumstat(out: string): Map<string, { additions: number; deletions: number; binary: boolean }> {
  const stats = new Map<string, { additions: number; deletions: number; binary: boolean }>();
  const parts = out.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const rec = parts[i]!;
    if (rec === '') continue;
    const [a, d, p] = rec.split('\t') as [string, string, string];
    const file = p !== '' ? p : ((i += 2), parts[i]!);
    stats.set(file, { additions: a === '-' ? 0 : Number(a), deletions: d === '-' ? 0 : Number(d), binary: a === '-' });
  }
  return stats;
}

// `git diff -z --name-status`: `X\0path\0`, or for a rename `R<score>\0old\0new\0`.
function parseNameStatus(out: string): Array<{ code: string; path: string; old_path?: string }> {
  const parts = out.split('\0');
  const files: Array<{ code: string; path: string; old_path?: string }> = [];
  for (let i = 0; i + 1 < parts.length; ) {
    const code = parts[i]!.charAt(0);
    if (code === 'R' || code === 'C') {
      files.push({ code, old_path: parts[i + 1]!, path: parts[i + 2]! });
      i += 3;
    } else {
      files.push({ code, path: parts[i + 1]! });
      i += 2;
    }
  }
  return files;
}

// GET /api/tasks/:id/changes: what the task changed since the merge-base with its base,
// committed or not, untracked files included; the repository is only read.
export async function taskChanges(input: ChangesInput, signal?: AbortSignal): Promise<Result<Changes>> {
  const snap = await snapshot(input.worktree, input.base, signal);
  if (!snap.ok) return snap;
  const range = [snap.mergeBase, snap.tree];
  const [numstat, names, counts, dirty] = await Promise.all([
    gitOut(input.worktree, ['diff', '-z', '-M', '--numstat', ...range], { signal }),
    gitOut(input.worktree, ['diff', '-z', '-M', '--name-status', ...range], { signal }),
    git(input.worktree, ['rev-list', '--left-right', '--count', `${snap.baseTip}...${snap.head}`], { signal }),
    gitOut(input.worktree, ['diff', '-z', '--name-only', snap.head, snap.tree], { signal }),
  ]);
  if (!numstat.ok) return numstat;
  if (!names.ok) return names;
  if (!dirty.ok) return dirty;
  if (counts.exitCode !== 0) return fail('INTERNAL', `git rev-list failed: ${counts.stderr}`);
  const [behind, ahead] = counts.stdout.trim().split(/\s+/).map(Number) as [number, number];
  const stats = parseNumstat(numstat.out);
  const files = parseNameStatus(names.out).map((f): ChangedFile => {
    const status = f.code === 'A' && snap.untracked.has(f.path) ? 'untracked' : (STATUS[f.code] ?? 'modified');
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
