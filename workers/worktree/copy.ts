import { randomUUID } from 'node:crypto';
import { chmodSync, constants, copyFileSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { git } from '../../daemon/git/run.ts';
import type { Result } from '../result.ts';
import { firstLine } from './repo.ts';

export interface CopyInput {
  /** the project's canonical root (its main checkout) */
  repo: string;
  /** the new worktree, absolute */
  worktree: string;
  /** `.grove.json` `copy` */
  patterns: string[];
}

export interface CopyReport {
  copied: string[];
  skipped: Array<{ path: string; why: string }>;
}

const inside = (p: string, root: string) => p === root || p.startsWith(root + path.sep);

// `.worktreeinclude` at the root adds its lines (gitignore syntax), if it is a file of its own.
function includeFile(repo: string): string[] {
  const file = path.join(repo, '.worktreeinclude');
  try {
    if (!lstatSync(file).isFile()) return [];
    return readFileSync(file, 'utf8').split('\n');
  } catch {
    return [];
  }
}

// Copies one untracked file into the worktree, its mode kept; a link only when it stays inside
// the project. Returns why it was not copied, or null.
function copyOne(input: CopyInput, rel: string, roots: { repo: string; worktree: string }): string | null {
  const src = path.join(input.repo, rel);
  const dest = path.join(input.worktree, rel);
  const st = lstatSync(src);
  mkdirSync(path.dirname(dest), { recursive: true });
  // A folder of the worktree that is a link (a tracked symlink) must not be written through.
  if (!inside(realpathSync(path.dirname(dest)), roots.worktree)) return 'its folder in the worktree leads out of it';
  if (st.isSymbolicLink()) {
    let target: string;
    try {
      target = realpathSync(src);
    } catch {
      return 'a link to nothing';
    }
    if (!inside(target, roots.repo)) return 'a link out of the project: not followed';
    symlinkSync(readlinkSync(src), dest);
    return null;
  }
  if (!st.isFile()) return 'not a regular file';
  copyFileSync(src, dest, constants.COPYFILE_EXCL);
  chmodSync(dest, st.mode & 0o7777);
  return null;
}

// `copy` and `.worktreeinclude` (DESIGN §10): files git does not track in the main checkout that
// match the patterns, copied (not linked) into a new worktree before its setup. Matching is git's
// own (`ls-files --ignored --exclude-from`); no match is no error, and a file that cannot be
// copied is reported, never a failure.
export async function copyIncluded(input: CopyInput): Promise<Result<CopyReport>> {
  const patterns = [...input.patterns, ...includeFile(input.repo)];
  const report: CopyReport = { copied: [], skipped: [] };
  if (!patterns.some((p) => p.trim() !== '' && !p.startsWith('#'))) return { ok: true, ...report };
  const list = path.join(tmpdir(), `grove-copy-${randomUUID()}`);
  writeFileSync(list, patterns.join('\n') + '\n');
  let out: string;
  try {
    const r = await git(input.repo, ['ls-files', '--others', '--ignored', `--exclude-from=${list}`, '-z', '--', '.', ':(exclude).grove']);
    if (r.exitCode !== 0) return { ok: true, copied: [], skipped: [{ path: '.', why: `git ls-files failed: ${firstLine(r.stderr)}` }] };
    out = r.stdout;
  } finally {
    rmSync(list, { force: true });
  }
  const roots = { repo: realpathSync(input.repo), worktree: realpathSync(input.worktree) };
  for (const rel of out.split('\0').filter(Boolean)) {
    try {
      const why = copyOne(input, rel, roots);
      if (why === null) report.copied.push(rel);
      else report.skipped.push({ path: rel, why });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      report.skipped.push({ path: rel, why: e.code === 'EEXIST' ? 'already in the worktree' : (e.code ?? e.message) });
    }
  }
  return { ok: true, ...report };
}
