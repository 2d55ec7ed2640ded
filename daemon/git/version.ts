// node:child_process, not execa: one synchronous `git --version` before anything starts.
import { execFileSync } from 'node:child_process';

// `git merge-tree --write-tree` (merges without a checkout, DESIGN §9) came in git 2.38.
export const MIN_GIT: readonly [number, number] = [2, 38];

// The version `git --version` prints ("git version 2.39.5", "git version 2.43.0.windows.1").
export function parseGitVersion(out: string): [number, number] | null {
  const m = /git version (\d+)\.(\d+)/.exec(out);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

// Why the git on PATH cannot serve grove, or null when it can: checked once, at start.
export function gitProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  let out: string;
  try {
    out = execFileSync('git', ['--version'], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return 'git is not on PATH; grove needs git 2.38 or newer';
  }
  const v = parseGitVersion(out);
  if (v === null) return `cannot tell the version of git from ${JSON.stringify(out.trim())}; grove needs git 2.38 or newer`;
  const [major, minor] = v;
  if (major < MIN_GIT[0] || (major === MIN_GIT[0] && minor < MIN_GIT[1])) return `git ${major}.${minor} is too old; grove needs git 2.38 or newer (for git merge-tree --write-tree)`;
  return null;
}
