import { lstatSync } from 'node:fs';
import path from 'node:path';
import { git } from '../../daemon/git/run.ts';
import { gitCapped } from '../../daemon/git/run.ts';
import { firstLine } from '../worktree/repo.ts';
import { fail, type Result } from '../result.ts';
import { withScratch, type Scratch } from './scratch.ts';
import { readFailure, snapshot } from './snapshot.ts';
import { diffRange } from './turn.ts';
import type { Side } from '../../schemas/review.ts';

// A served diff is cut here (DESIGN §9), and says so in a header.
export const MAX_DIFF_BYTES = 10 * 1024 * 1024;

export interface DiffInput {
  worktree: string;
  base: string;
  /** one file's diff only */
  path?: string;
  /** the task's id: its turns are refs/grove/turns/<task>/<n> (without it, no turn is found) */
  task?: string;
  /** the range compared (DESIGN §17): default the merge-base to the working state */
  from?: Side;
  to?: Side;
  /** the daemon's scratch folder, where a read keeps what it makes */
  scratch: string;
}

// GET /api/tasks/:id/diff: the unified diff of the task's changes against the merge-base, binary
// files included so that `git apply` takes it; one file with `path` (a literal path, not a pattern).
// The bytes are git's, read as they come and cut at MAX_DIFF_BYTES (git is stopped there).
export function taskDiff(input: DiffInput, signal?: AbortSignal): Promise<Result<{ diff: Uint8Array; truncated: boolean }>> {
  return withScratch(input.scratch, input.worktree, (scratch) => diffIn(input, scratch, signal), signal);
}

async function diffIn(input: DiffInput, scratch: Scratch, signal: AbortSignal | undefined): Promise<Result<{ diff: Uint8Array; truncated: boolean }>> {
  const snap = await snapshot(input.worktree, input.base, scratch, signal);
  if (!snap.ok) return snap;
  const range = await diffRange(input, snap.mergeBase, scratch, signal);
  if (!range.ok) return range.code === 'TURN_NOT_FOUND' ? range : readFailure(input.worktree, snap.env, range, signal);
  if (input.path !== undefined && (await namesFolder(input.worktree, range.revs[0]!, input.path, scratch, signal))) {
    return fail('VALIDATION_FAILED', `${JSON.stringify(input.path)} is a folder: path must name a file`, '/query/path');
  }
  const only = input.path !== undefined ? ['--', `:(literal)${input.path}`] : [];
  // Textconv drivers and external diff tools make output that `git apply` does not take.
  const args = ['diff', '--binary', '-M', '--no-color', '--no-ext-diff', '--no-textconv', ...range.revs, ...only];
  const r = await gitCapped(input.worktree, args, { maxBytes: MAX_DIFF_BYTES, env: snap.env, ...(signal ? { signal } : {}) });
  // Stopped (the bound, the client gone): the bound answers for it.
  if (r.aborted) return fail('INTERNAL', 'the diff was stopped');
  if (r.truncated) return { ok: true, diff: r.stdout, truncated: true };
  if (r.exitCode !== 0) {
    const message = `git diff failed: ${firstLine(r.stderr)}`;
    return readFailure(input.worktree, snap.env, input.path !== undefined ? fail('VALIDATION_FAILED', message, '/query/path') : fail('INTERNAL', message), signal);
  }
  return { ok: true, diff: r.stdout, truncated: false };
}

// Whether `file` is a folder at the merge-base or in the worktree, and a file in neither.
async function namesFolder(worktree: string, mergeBase: string, file: string, scratch: Scratch, signal: AbortSignal | undefined): Promise<boolean> {
  const before = await git(worktree, ['cat-file', '-t', `${mergeBase}:${file}`], { env: scratch.env, signal });
  const full = path.resolve(worktree, file);
  const inside = !path.relative(worktree, full).startsWith('..');
  const now = inside ? lstatSync(full, { throwIfNoEntry: false }) : undefined;
  const kinds = [before.exitCode === 0 ? before.stdout.trim() : null, now === undefined ? null : now.isDirectory() ? 'tree' : 'blob'];
  return kinds.includes('tree') && !kinds.includes('blob');
}
