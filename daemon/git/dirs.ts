import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

export interface GitDirs {
  /** the checkout's top folder (the one holding `.git`) */
  top: string;
  /** its own git folder: `<top>/.git`, or a linked worktree's `<repo>/.git/worktrees/<name>` */
  gitDir: string;
  /** the repository's folder shared by its worktrees (objects, refs, config) */
  commonDir: string;
}

// Where a checkout's git data is, found as git finds it (gitrepository-layout): from `dir` up to
// the first folder holding `.git`, a folder (the git dir) or a file `gitdir: <path>` naming one; a
// git dir with a `commondir` file shares that repository folder. Read from the files rather than
// asked of a git process, because a fork of the daemon is dear and a session's start needs this.
// Paths are absolute with their links resolved; null when `dir` is in no git checkout.
export function gitDirsOf(dir: string): GitDirs | null {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const found = gitDirAt(d);
    if (found !== undefined) return found;
    if (path.dirname(d) === d) return null;
  }
}

// `d`'s git data: undefined when `d` holds no `.git` (look further up), null when its `.git` is
// not a git dir (git stops there too, with "not a git repository").
function gitDirAt(d: string): GitDirs | null | undefined {
  const dotGit = path.join(d, '.git');
  let st;
  try {
    st = lstatSync(dotGit);
  } catch {
    return undefined;
  }
  let gitDir = dotGit;
  if (st.isFile()) {
    const named = /^gitdir: (.+)$/m.exec(read(dotGit) ?? '');
    if (!named) return null;
    gitDir = path.resolve(d, named[1]!.trim());
  }
  const common = read(path.join(gitDir, 'commondir'));
  const commonDir = common === null ? gitDir : path.resolve(gitDir, common.trim());
  // git's own test of a git dir: a HEAD, and the repository's objects and refs folders.
  if (!isFile(path.join(gitDir, 'HEAD')) || !isDir(path.join(commonDir, 'objects')) || !isDir(path.join(commonDir, 'refs'))) return null;
  return { top: realpathSync(d), gitDir: realpathSync(gitDir), commonDir: realpathSync(commonDir) };
}

function read(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
