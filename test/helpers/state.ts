import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { branches, worktrees } from './git.ts';
import type { TestDaemon } from './daemon.ts';

// Command lines of running processes that contain `pattern` (zombies excluded).
export function processesMatching(pattern: string): string[] {
  const out: string[] = [];
  for (const line of execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' }).split('\n')) {
    const m = /^\s*(\S+)\s+(.*)$/.exec(line);
    if (m && !m[1]!.startsWith('Z') && m[2]!.includes(pattern) && !m[2]!.startsWith('ps ')) out.push(m[2]!);
  }
  return out;
}

// Pids of running processes (zombies excluded) whose environment holds `entry` (e.g.
// GROVE_TASK_ID=<id>: what grove started for a task, whatever became of its process group).
export function processesWithEnv(entry: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((f) => /^\d+$/.test(f))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry) && !/^\S+ \(.*\) Z/.test(readStat(Number(pid)))) out.push(Number(pid));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

// A `sleep` no other process runs: its number is what the process table is searched for.
export function marker(t: { after(fn: () => unknown): void }): string {
  const m = `3600.${randomInt(1e9)}`;
  t.after(() => killMatching(m));
  return m;
}

// Kills the processes this test started (their command line holds its marker), if any are left.
export function killMatching(m: string): void {
  for (const line of execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n')) {
    const [, pid, args] = /^\s*(\d+)\s+(.*)$/.exec(line) ?? [];
    if (pid && args!.includes(m) && !args!.startsWith('ps ')) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

// Resolves once no process matches `m`; rejects naming them after `ms`.
export async function gone(m: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesMatching(m);
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new Error(`still running: ${left.join('; ')}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// Resolves once no process with this pid runs (it is not our child, so there is no exit event).
export async function waitPidGone(pid: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (existsSync(`/proc/${pid}`) && !/^\S+ \(.*\) Z/.test(readStat(pid))) {
    if (Date.now() > deadline) throw new Error(`pid ${pid} still runs`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function readStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
}

// What exists for a repository in git and on disk, relative to the repository.
export function repoState(repo: string): { branches: string[]; worktrees: string[]; folders: string[] } {
  const dir = path.join(repo, '.grove', 'worktrees');
  return {
    branches: branches(repo),
    worktrees: worktrees(repo)
      .filter((w) => w !== repo)
      .map((w) => path.relative(repo, w) + '/')
      .sort(),
    folders: existsSync(dir) ? readdirSync(dir).sort() : [],
  };
}

// Asserts git, disk and store agree: every live task has its branch, registered worktree and
// folder; nothing else exists under .grove/worktrees; no creation intent is pending.
export async function consistentState(d: TestDaemon, repo: string, projectId: string): Promise<{ live: any[]; problems: string[] }> {
  const tasks = (await d.socket('GET', `/api/tasks?project_id=${projectId}`)).json as any[];
  const live = tasks.filter((t) => t.status !== 'archived');
  const st = repoState(repo);
  const problems: string[] = [];
  const want = live.map((t) => t.worktree_path).sort();
  if (JSON.stringify(st.worktrees) !== JSON.stringify(want)) problems.push(`worktrees ${st.worktrees} != tasks ${want}`);
  const folders = live.map((t) => t.worktree_path.split('/')[2]).sort();
  if (JSON.stringify(st.folders) !== JSON.stringify(folders)) problems.push(`folders ${st.folders} != tasks ${folders}`);
  const taskBranches = new Set(tasks.map((t) => t.branch));
  for (const b of st.branches) if (b !== 'main' && !taskBranches.has(b)) problems.push(`stray branch ${b}`);
  for (const t of tasks) if (!st.branches.includes(t.branch)) problems.push(`task ${t.name} lost its branch ${t.branch}`);
  if (live.some((t) => t.worktree_missing)) problems.push('a live task reports its worktree missing');
  const journal = path.join(d.home, 'data', 'journal');
  const pending = existsSync(journal) ? readdirSync(journal) : [];
  if (pending.length > 0) problems.push(`pending intents ${pending}`);
  return { live, problems };
}

// Pids of the processes (not this one) whose working folder is `dir` or under it: the git a
// daemon runs with -C there, and its hooks and filters.
export function pidsWorkingIn(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue; // gone, or not ours to read
    }
    if (cwd === dir || cwd.startsWith(dir + path.sep)) pids.push(pid);
  }
  return pids;
}

// Pids of the running git processes (zombies excluded) that `pid` started, and what those started
// in turn, whose command line names `dir` (git -C <dir>): a daemon's git is the leader of a group
// of its own, but still its child.
export function gitChildren(pid: number, dir: string): number[] {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const name of readdirSync('/proc')) {
    const stat = /^\d+$/.test(name) ? readStat(Number(name)) : '';
    const m = /^(\d+) \((.*)\) (\S) (\d+)/s.exec(stat);
    if (m && m[3] !== 'Z') {
      parent.set(Number(m[1]), Number(m[4]));
      comm.set(Number(m[1]), m[2]!);
    }
  }
  const under = (p: number): boolean => {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q)) if (q === pid) return true;
    return false;
  };
  const names = (p: number): boolean => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
    } catch {
      return false; // gone meanwhile
    }
  };
  return [...comm].filter(([p, c]) => c.startsWith('git') && under(p) && names(p)).map(([p]) => p);
}
