import { randomUUID } from 'node:crypto';
import { constants, realpathSync, writeFileSync, rmSync } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, open, readlink, realpath, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { git } from '../../daemon/git/run.ts';
import { MAX_CONFIG_BYTES } from '../../schemas/project-config.ts';
import type { Result } from '../result.ts';
import { firstLine } from './repo.ts';

// What one creation may copy in all (the sizes of the copied files added up): `copy` is for
// local config such as `.env`, not for data; a file that would go past it is not copied.
export const COPY_MAX_BYTES = 1024 ** 3;
// A file whose holes add up to this much is sparse: a plain copy would write them out.
const SPARSE_HOLES = 1024 * 1024;
// How many copied and how many skipped paths the report names; the rest are counted.
const COPY_REPORT_PATHS = 20;

export interface CopyInput {
  /** the project's canonical root (its main checkout) */
  repo: string;
  /** the new worktree, absolute */
  worktree: string;
  /** `.grove.json` `copy` */
  patterns: string[];
  /** how long the copy may take; past it, it stops and the rest is not copied */
  timeoutMs: number;
  /** the most bytes it may copy in all (default COPY_MAX_BYTES) */
  maxBytes?: number;
}

// Bounded whatever was matched: the first paths of each kind, and counts.
export interface CopyReport {
  /** how many files (and links) were copied, and their bytes */
  copied: number;
  bytes: number;
  /** the first COPY_REPORT_PATHS of them */
  copied_paths: string[];
  /** how many were not, and the first COPY_REPORT_PATHS of them with the reason */
  not_copied: number;
  skipped: Array<{ path: string; why: string }>;
  /** why the copy stopped before the end (its time ran out), or null */
  stopped: string | null;
}

const inside = (p: string, root: string) => p === root || p.startsWith(root + path.sep);
const INCLUDE = '.worktreeinclude';

// `.worktreeinclude` at the root adds its lines (gitignore syntax), if it is a file of its own
// (not a link). It is read up to the size limit of `.grove.json`; past it, not at all.
async function includeFile(repo: string): Promise<{ patterns: string[]; refused?: string }> {
  let fh;
  try {
    fh = await open(path.join(repo, INCLUDE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return { patterns: [] };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { patterns: [] };
    const tooLarge = `it is larger than ${MAX_CONFIG_BYTES} bytes, the limit of .grove.json: its patterns are not used`;
    if (st.size > MAX_CONFIG_BYTES) return { patterns: [], refused: tooLarge };
    // One byte more than the limit: a file that grew since the stat is caught too.
    const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let size = 0;
    for (let n = -1; n !== 0 && size < buf.length; size += n) n = (await fh.read(buf, size, buf.length - size, size)).bytesRead;
    if (size > MAX_CONFIG_BYTES) return { patterns: [], refused: tooLarge };
    return { patterns: buf.toString('utf8', 0, size).split('\n') };
  } catch (err) {
    return { patterns: [], refused: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  } finally {
    await fh.close();
  }
}

// The real folder in the worktree that `rel`'s file goes into, its folders made one at a time:
// each is looked at (lstat) before it is made or entered, so nothing is made through a link (a
// tracked symlink) that leads out of the worktree. A string: why not. `seen` keeps the answers.
async function folderFor(worktree: string, rel: string, seen: Map<string, string | { real: string }>): Promise<string | { real: string }> {
  let real = worktree;
  let at = '';
  for (const part of path.dirname(rel).split(path.sep).filter((p) => p !== '.' && p !== '')) {
    at = at === '' ? part : path.join(at, part);
    let known = seen.get(at);
    if (known === undefined) {
      known = await enter(real, part, at, worktree);
      seen.set(at, known);
    }
    if (typeof known === 'string') return known;
    real = known.real;
  }
  return { real };
}

async function enter(parent: string, part: string, at: string, worktree: string): Promise<string | { real: string }> {
  const next = path.join(parent, part);
  let st;
  try {
    st = await lstat(next);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(next);
    return { real: next };
  }
  if (st.isDirectory()) return { real: next };
  if (!st.isSymbolicLink()) return `${at} in the worktree is not a folder`;
  let real: string;
  try {
    real = await realpath(next);
  } catch {
    return `its folder ${at} in the worktree is a link to nothing`;
  }
  if (!inside(real, worktree)) return `its folder ${at} in the worktree is a link out of it: not followed`;
  return (await stat(real)).isDirectory() ? { real } : `${at} in the worktree is not a folder`;
}

// Copies one untracked file to `dest` in the worktree, its mode kept; a link only when it stays
// inside the project. Returns why it was not copied, or the bytes it copied.
async function copyOne(src: string, dest: string, repo: string, bound: { room: number; max: number }): Promise<string | number> {
  const st = await lstat(src);
  if (st.isSymbolicLink()) {
    let target: string;
    try {
      target = await realpath(src);
    } catch {
      return 'a link to nothing';
    }
    if (!inside(target, repo)) return 'a link out of the project: not followed';
    await symlink(await readlink(src), dest);
    return 0;
  }
  if (!st.isFile()) return 'not a regular file';
  if (st.size - st.blocks * 512 >= SPARSE_HOLES) return `a sparse file of ${st.size} bytes (${st.blocks * 512} on disk): a copy would write out its holes`;
  if (st.size > bound.room) return `${st.size} bytes: it would take the copy past its bound of ${bound.max} bytes in all`;
  await copyFile(src, dest, constants.COPYFILE_EXCL);
  await chmod(dest, st.mode & 0o7777);
  return st.size;
}

// The least time the listing of matching files gets (see copyIncluded).
const LISTING_MIN_MS = 1000;

// `copy` and `.worktreeinclude` (DESIGN §10): files git does not track in the main checkout that
// match the patterns, copied (not linked) into a new worktree before its setup. Matching is git's
// own (`ls-files --ignored --exclude-from`); no match is no error, and a file that cannot be
// copied is reported, never a failure. Bounded in bytes and in time; the report in counts.
export async function copyIncluded(input: CopyInput): Promise<Result<CopyReport>> {
  const deadline = Date.now() + input.timeoutMs;
  const report: CopyReport = { copied: 0, bytes: 0, copied_paths: [], not_copied: 0, skipped: [], stopped: null };
  const skip = (rel: string, why: string) => {
    report.not_copied++;
    if (report.skipped.length < COPY_REPORT_PATHS) report.skipped.push({ path: rel, why });
  };
  const include = await includeFile(input.repo);
  if (include.refused !== undefined) skip(INCLUDE, include.refused);
  const patterns = [...input.patterns, ...include.patterns];
  if (!patterns.some((p) => p.trim() !== '' && !p.startsWith('#'))) return { ok: true, ...report };
  const list = path.join(tmpdir(), `grove-copy-${randomUUID()}`);
  writeFileSync(list, patterns.join('\n') + '\n', { mode: 0o600 });
  let out: string;
  try {
    // The listing is what lets a copy that runs out of time count what it did not copy: it gets
    // the copy's time, but never less than a second.
    const r = await git(input.repo, ['ls-files', '--others', '--ignored', `--exclude-from=${list}`, '-z', '--', '.', ':(exclude).grove'], { signal: AbortSignal.timeout(Math.max(LISTING_MIN_MS, input.timeoutMs)) });
    if (r.exitCode !== 0) {
      skip('.', `git ls-files failed: ${firstLine(r.stderr)}`);
      return { ok: true, ...report };
    }
    out = r.stdout;
  } finally {
    rmSync(list, { force: true });
  }
  const repo = realpathSync(input.repo);
  const worktree = realpathSync(input.worktree);
  const max = input.maxBytes ?? COPY_MAX_BYTES;
  const seen = new Map<string, string | { real: string }>();
  const files = out.split('\0').filter(Boolean);
  for (const [i, rel] of files.entries()) {
    if (Date.now() >= deadline) {
      report.stopped = `the copy ran out of its time (setup_timeout_s, ${Math.round(input.timeoutMs / 1000)} s); ${files.length - i} matching files not copied`;
      report.not_copied += files.length - i;
      break;
    }
    try {
      const folder = await folderFor(worktree, rel, seen);
      const res = typeof folder === 'string' ? folder : await copyOne(path.join(input.repo, rel), path.join(folder.real, path.basename(rel)), repo, { room: max - report.bytes, max });
      if (typeof res === 'string') skip(rel, res);
      else {
        report.copied++;
        report.bytes += res;
        if (report.copied_paths.length < COPY_REPORT_PATHS) report.copied_paths.push(rel);
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      skip(rel, e.code === 'EEXIST' ? 'already in the worktree' : (e.code ?? e.message));
    }
  }
  return { ok: true, ...report };
}
