import './env.ts';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Runs git synchronously for fixtures; throws with git's stderr on failure.
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

// A real repository with one commit on `main`, removed after the test (or whatever `t` is: the
// screenshots script passes its own cleanup).
export function makeRepo(t: { after(fn: () => unknown): void }, opts: { files?: Record<string, string>; parent?: string } = {}): string {
  const dir = realpathSync(mkdtempSync(path.join(opts.parent ?? tmpdir(), 'grove-repo-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  git(dir, 'init', '-q', '-b', 'main');
  const files = opts.files ?? { 'README.md': '# fixture\n' };
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

// A commit adding `file` on the branch checked out in `dir`; the new tip.
export function commitFile(dir: string, file: string): string {
  writeFileSync(path.join(dir, file), `${file}\n`);
  git(dir, 'add', file);
  git(dir, 'commit', '-qm', `adds ${file}`);
  return git(dir, 'rev-parse', 'HEAD');
}

// A scratch folder removed after the test.
export function makeTempDir(t: { after(fn: () => unknown): void }, prefix = 'grove-tmp-', parent = tmpdir()): string {
  const dir = realpathSync(mkdtempSync(path.join(parent, prefix)));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// True when git exits 0 (for checks such as check-ref-format).
export function gitSucceeds(cwd: string, ...args: string[]): boolean {
  try {
    execFileSync('git', ['-C', cwd, ...args], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// Local branch names of a repository.
export function branches(repo: string): string[] {
  return git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean).sort();
}

// Worktree paths git knows for a repository (the main checkout first).
export function worktrees(repo: string): string[] {
  return git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}
