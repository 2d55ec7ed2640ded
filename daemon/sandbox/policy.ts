import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { gitDirsOf } from '../git/dirs.ts';

// What a confined session may touch (DESIGN §18), as data: bwrap.ts turns it into mounts.
// Every path is absolute and real (symlinks resolved), and exists.
export interface SandboxPolicy {
  /** the task's worktree: the agent's working directory */
  worktree: string;
  /** the session's private temporary folder, its TMPDIR */
  tmpdir: string;
  /** bound writable */
  writable: string[];
  /** bound read-only again, above any writable path that holds them (git's config, hooks) */
  readOnly: string[];
  /** replaced by an empty folder (its files are not found) or by an empty file (/dev/null) */
  hidden: { path: string; kind: 'dir' | 'file' }[];
  /** asked for but not on disk, so not mounted (a write path the agent would create) */
  skipped: string[];
  /** folders that are a throwaway folder of the session's inside (`source`, bound over `path`), each
   * of their entries bound again (writable or read-only as the lists above say): a new file there
   * (git's `packed-refs.lock`) works and never reaches the real folder */
  scratch: { path: string; source: string }[];
}

export interface PolicyInput {
  worktree: string;
  home: string;
  tmpdir: string;
  /** the agent's own state folders (`~/.claude`, …) */
  agentState: string[];
  /** `.grove.json` `sandbox.write` and `sandbox.read_deny`, absolute */
  write: string[];
  readDeny: string[];
  /** a folder of the session's own, made here, for the repository folder's scratch copy */
  scratchDir: string;
  /** grove's data folder and user config file */
  groveData: string;
  groveConfig: string;
  /** the worktrees of the project's other tasks */
  otherWorktrees: string[];
}

export type PolicyResult = { ok: true; policy: SandboxPolicy } | { ok: false; code: 'NOT_A_GIT_REPO'; message: string };

// Secrets under HOME hidden from every confined agent (DESIGN §18).
const HOME_SECRETS = ['.ssh', '.gnupg', '.aws', path.join('.config', 'gh'), '.netrc'];

// The path with its symlinks resolved, or null when nothing is there: a mount follows the
// link, so the policy names what the link points at.
function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

function kindOf(p: string): 'dir' | 'file' {
  return lstatSync(p).isDirectory() ? 'dir' : 'file';
}

// The policy of a session in `input.worktree`. Its git data is found as git finds it, so that a
// linked worktree (grove's `.grove/worktrees/<slug>`) gets its own `worktrees/<name>/` only.
export function policyFor(input: PolicyInput): PolicyResult {
  const dirs = gitDirsOf(input.worktree);
  if (dirs === null) return { ok: false, code: 'NOT_A_GIT_REPO', message: `not a git worktree: ${input.worktree}` };
  const { gitDir, commonDir } = dirs;
  const skipped: string[] = [];
  const existing = (paths: string[], skip: boolean): string[] => {
    const out: string[] = [];
    for (const p of paths) {
      const rp = real(p);
      if (rp !== null) out.push(rp);
      else if (skip) skipped.push(p);
    }
    return out;
  };
  const worktree = dirs.top;
  const tmpdir = real(input.tmpdir) ?? input.tmpdir;
  // objects/, refs/ and logs/ so that a commit lands; the worktree's own git dir (HEAD, index).
  // For the main checkout git dir and common dir are one, inside the worktree already.
  const gitWrite = [path.join(commonDir, 'objects'), path.join(commonDir, 'refs'), path.join(commonDir, 'logs'), gitDir];
  const writable = unique([worktree, ...existing(gitWrite, false), ...existing([input.tmpdir, ...input.agentState, ...input.write], true)]);
  // The repository's config and hooks would run code unconfined later (a hook, core.fsmonitor);
  // a linked worktree's `.git` file and `config.worktree` could point git at such a config too.
  // Its own `commondir` and `gitdir` too: pointed at a folder of the agent's, grove's git in this
  // worktree would read that folder's config.
  const packedRefs = path.join(commonDir, 'packed-refs');
  const linked = gitDir !== commonDir;
  const guarded = [
    path.join(commonDir, 'config'),
    path.join(commonDir, 'info'),
    // In a linked worktree's scratch folder packed-refs is a copy instead (below).
    ...(linked ? [] : [packedRefs]),
    path.join(commonDir, 'hooks'),
    path.join(gitDir, 'config.worktree'),
    path.join(gitDir, 'commondir'),
    path.join(gitDir, 'gitdir'),
    path.join(worktree, '.git'),
  ];
  // A linked worktree's repository folder is scratch: git takes locks beside what it changes and
  // replaces packed-refs by a rename to delete any ref (a rebase, a branch deletion), and the
  // folder itself must not be writable on disk (a `commondir` file there would point every
  // worktree's git elsewhere). So inside it is a folder of the session's with a copy of
  // packed-refs (what the agent does to it stays there: read-only, as far as the repository is
  // concerned), every other entry bound again read-only (HEAD, index, modules/, the other
  // worktrees' folders, …), the writable ones above winning where they are deeper.
  const rest = linked ? readdirSync(commonDir).map((n) => path.join(commonDir, n)).filter((p) => !gitWrite.includes(p) && !guarded.includes(p) && p !== packedRefs) : [];
  if (linked) {
    mkdirSync(input.scratchDir, { recursive: true, mode: 0o700 });
    if (existsSync(packedRefs)) copyFileSync(packedRefs, path.join(input.scratchDir, 'packed-refs'));
  }
  const readOnly = unique([...existing(guarded, false), ...rest].filter((p) => p !== gitDir));
  const secrets = HOME_SECRETS.map((s) => path.join(input.home, s));
  const deny = [...secrets, input.groveData, input.groveConfig, ...input.otherWorktrees, ...input.readDeny];
  const hidden = unique(existing(deny, false)).map((p) => ({ path: p, kind: kindOf(p) }));
  return { ok: true, policy: { worktree, tmpdir, writable, readOnly, hidden, skipped, scratch: linked ? [{ path: commonDir, source: input.scratchDir }] : [] } };
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)];
}
