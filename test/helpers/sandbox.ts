import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import type { PolicyInput } from '../../daemon/sandbox/policy.ts';
import { git, makeRepo, makeTempDir } from './git.ts';

type T = { after(fn: () => unknown): void };

// A project as grove lays it out for the sandbox's tests: a repository with two tasks' linked
// worktrees at `.grove/worktrees/<slug>`, a HOME with a key, grove's data and config, a TMPDIR.
export interface SandboxFixture {
  repo: string;
  worktree: string;
  other: string;
  home: string;
  groveHome: string;
  input: PolicyInput;
}

export function sandboxFixture(t: T): SandboxFixture {
  const repo = makeRepo(t);
  const worktree = path.join(repo, '.grove', 'worktrees', 'mine');
  const other = path.join(repo, '.grove', 'worktrees', 'other');
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/mine', worktree);
  git(repo, 'worktree', 'add', '-q', '-b', 'grove/other', other);
  writeFileSync(path.join(other, 'theirs.txt'), 'OTHER-TASK\n');
  const home = makeTempDir(t, 'grove-home-');
  mkdirSync(path.join(home, '.ssh'));
  writeFileSync(path.join(home, '.ssh', 'id_x'), 'SECRET-KEY\n');
  writeFileSync(path.join(home, '.netrc'), 'NETRC-SECRET\n');
  mkdirSync(path.join(home, '.agent'));
  const groveHome = makeTempDir(t, 'grove-home-data-');
  mkdirSync(path.join(groveHome, 'data'));
  writeFileSync(path.join(groveHome, 'data', 'store.db'), 'GROVE-DATA\n');
  writeFileSync(path.join(groveHome, 'config.json'), '{"secret":"GROVE-CONFIG"}\n');
  const tmpdir = makeTempDir(t, 'grove-session-tmp-');
  return {
    repo,
    worktree,
    other,
    home,
    groveHome,
    input: {
      worktree,
      home,
      tmpdir,
      scratchDir: path.join(makeTempDir(t, 'grove-session-'), 'git'),
      agentState: [path.join(home, '.agent')],
      write: [],
      readDeny: [],
      groveData: path.join(groveHome, 'data'),
      groveConfig: path.join(groveHome, 'config.json'),
      otherWorktrees: [other],
    },
  };
}

// Runs an argv (bwrap's, from bwrapArgv) with `env`, optionally as another user; its end.
export function runArgv(argv: string[], env: Record<string, string>, opts: { user?: string; timeoutMs?: number } = {}): { status: number | null; stdout: string; stderr: string } {
  const [cmd, ...args] = opts.user ? ['runuser', '-u', opts.user, '--', ...argv] : argv;
  const r = spawnSync(cmd!, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: opts.timeoutMs ?? 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// The daemon's PATH without a system bubblewrap: each folder of PATH that holds `bwrap` is
// replaced by a folder of links to all it holds but that (a machine without bubblewrap, for
// grove's own sandbox; DESIGN §18).
export function pathWithoutBwrap(t: T): string {
  const seen = new Map<string, string>();
  return (process.env.PATH ?? '')
    .split(':')
    .map((dir) => {
      if (dir === '' || !existsSync(path.join(dir, 'bwrap'))) return dir;
      const real = realpathSync(dir);
      if (!seen.has(real)) {
        const shadow = makeTempDir(t, 'grove-no-bwrap-');
        for (const name of readdirSync(real)) if (name !== 'bwrap') symlinkSync(path.join(real, name), path.join(shadow, name));
        seen.set(real, shadow);
      }
      return seen.get(real)!;
    })
    .join(':');
}

// This machine's first address that is not loopback: a host a confined agent reaches only through
// its proxy (loopback is not proxied inside the sandbox: DESIGN §18, docs/decisions/sandbox.md).
export function machineAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
  if (!found) throw new Error('these tests need an IPv4 address that is not loopback on this machine');
  return found.address;
}
