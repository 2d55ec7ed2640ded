import { realpathSync } from 'node:fs';
import { git } from '../../daemon/git/run.ts';
import { fail, type Result } from '../result.ts';

// git's message as one line for an error: its first non-empty line, without "fatal: ".
export function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim() !== '') ?? '').replace(/^(fatal|error): /, '');
}

export interface RepoInfo {
  commonDir: string;
  /** null in a repository without commits */
  head: { commit: string; ref: string } | null;
}

// One git call for what every creation needs: the common git dir, HEAD's commit and its
// branch. Each git process costs a fork of this (large) process, so calls are kept few.
export async function repoInfo(repo: string, signal?: AbortSignal): Promise<RepoInfo | string> {
  const res = await git(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir', 'HEAD', '--symbolic-full-name', 'HEAD'], { signal });
  const [commonDir, commit, ref] = res.stdout.split('\n');
  if (!commonDir) return firstLine(res.stderr);
  if (res.exitCode !== 0 || !commit || !/^[0-9a-f]{40,64}$/.test(commit)) return { commonDir, head: null };
  return { commonDir, head: { commit, ref: ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : 'HEAD' } };
}

// A given base as a commit; refused unless it names exactly one commit.
export async function resolveBase(repo: string, given: string, signal?: AbortSignal): Promise<Result<{ base: string; base_commit: string }>> {
  const resolved = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${given}^{commit}`], { signal });
  if (resolved.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(resolved.stdout)) {
    return fail('BASE_NOT_FOUND', `${JSON.stringify(given)} is not a commit in ${repo}`, '/base');
  }
  return { ok: true, base: given, base_commit: resolved.stdout };
}

// True when `dir` is the top of a git work tree itself, not a folder inside the main checkout.
export async function isWorktreeRoot(dir: string, signal?: AbortSignal): Promise<boolean> {
  const top = await git(dir, ['rev-parse', '--show-toplevel'], { signal });
  if (top.exitCode !== 0) return false;
  try {
    return realpathSync(top.stdout) === realpathSync(dir);
  } catch {
    return false;
  }
}
