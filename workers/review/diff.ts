import { fail, type Result } from '../result.ts';
import { gitOut, snapshot } from './snapshot.ts';

// A served diff is cut here (DESIGN §9), and says so in a header.
export const MAX_DIFF_BYTES = 10 * 1024 * 1024;

export interface DiffInput {
  worktree: string;
  base: string;
  /** one file's diff only */
  path?: string;
}

// GET /api/tasks/:id/diff: the unified diff of the task's changes against the merge-base, binary
// files included so that `git apply` takes it; one file with `path` (a literal path, not a pattern).
export async function taskDiff(input: DiffInput, signal?: AbortSignal): Promise<Result<{ diff: string; truncated: boolean }>> {
  const snap = await snapshot(input.worktree, input.base, signal);
  if (!snap.ok) return snap;
  const only = input.path !== undefined ? ['--', `:(literal)${input.path}`] : [];
  const r = await gitOut(input.worktree, ['diff', '--binary', '-M', '--no-color', '--no-ext-diff', snap.mergeBase, snap.tree, ...only], { signal });
  if (!r.ok) return input.path !== undefined && !signal?.aborted ? fail('VALIDATION_FAILED', r.message, '/query/path') : r;
  const bytes = Buffer.from(r.out + (r.out === '' ? '' : '\n'));
  if (bytes.length <= MAX_DIFF_BYTES) return { ok: true, diff: bytes.toString(), truncated: false };
  return { ok: true, diff: bytes.subarray(0, MAX_DIFF_BYTES).toString(), truncated: true };
}
