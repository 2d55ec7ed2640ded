import { appendFileSync, existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Where every task's worktree lives, relative to the project's root (DESIGN §3).
export const WORKTREES_DIR = '.grove/worktrees';

export function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

// A real folder, created if missing; a symlink here could send worktrees anywhere.
// Returns why it cannot be used, or null.
export function ensureRealDir(dir: string): string | null {
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink() || !st.isDirectory()) return `${dir} exists and is not a folder (a symlink or a file); grove will not use it`;
    return null;
  } catch {
    mkdirSync(dir, { mode: 0o755 });
    return null;
  }
}

// `.grove/` and `.grove/worktrees/` as real folders under the project's root.
export function ensureWorktreesDir(repo: string): string | null {
  return ensureRealDir(path.join(repo, '.grove')) ?? ensureRealDir(path.join(repo, WORKTREES_DIR));
}

// Whether a link on the way (`.grove`, `.grove/worktrees`) could lead out of the project.
export function worktreesDirLinked(repo: string): boolean {
  return isLink(path.join(repo, '.grove')) || isLink(path.join(repo, WORKTREES_DIR));
}

// `/.grove/` in the repository's info/exclude, once, so the main checkout's status stays clean.
export function ensureExcluded(commonDir: string): void {
  const infoDir = path.join(commonDir, 'info');
  const file = path.join(infoDir, 'exclude');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (text.split('\n').some((l) => l.trim() === '/.grove/')) return;
  mkdirSync(infoDir, { recursive: true });
  appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}/.grove/\n`);
}

// A worktree path as grove makes it (`.grove/worktrees/<slug>/`), without its trailing slash;
// null for anything else, so removal can never be pointed outside that folder.
export function groveWorktreePath(worktreePath: string): string | null {
  const rel = worktreePath.replace(/\/+$/, '');
  const parts = rel.split('/');
  if (!rel.startsWith(`${WORKTREES_DIR}/`) || parts.includes('..') || parts.length !== 3) return null;
  return rel;
}
