import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { before, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';

// The leak guard (docs/decisions/tests.md): agent sessions run detached in process groups of
// their own and outlive their daemon by design, so a test that does not end them leaves them
// running. Every GROVE_HOME a test uses is noted here; once the file's every cleanup has run,
// what still runs for those homes is killed and fails the file, named.

export interface LeakedProcess {
  pid: number;
  pgid: number;
  /** the command line, its arguments joined by spaces (a script of many lines as `…`) */
  cmdline: string;
  /** the home it was found by (its own command line or cwd, or an ancestor's) */
  home: string;
}

const homes = new Map<string, string>(); // home -> the test that made it
let root: TestContext | null = null;
let armed = false;

// The root's context, through a root `before` hook: the only way to add a root `after` hook from
// inside a test (`after()` called there belongs to that test).
before((t) => {
  root = t as TestContext; // the root is a test, not a suite
  arm();
});

// Registered at the first home, in the root: the root's `after` hooks run FIFO once every test's
// own cleanups have run, so this one comes after the file's top-level ones and sharedForFile's
// (registered when the file was loaded), which stop its shared daemons and kill what they kept.
function arm(): void {
  if (armed || root === null || homes.size === 0) return;
  armed = true;
  root.after(async () => {
    const leaked = await endLeaks([...homes.keys()]);
    if (leaked.length > 0) throw new Error(describeLeaks(leaked, homes));
  });
}

// Notes a home whose processes must all be gone once the file's cleanups have run.
export function guardHome(home: string, by = ''): void {
  if (!homes.has(home)) homes.set(home, by);
  arm();
}

interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  args: string[];
  cwd: string;
}

function readProc(pid: number): Proc | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may hold spaces and parentheses: the fields start after the last ')'
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (args.at(-1) === '') args.pop();
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // another user's process (a test that switches users): its cwd is not ours to read
    }
    return { pid, ppid: Number(f[1]), pgid: Number(f[2]), state: f[0]!, args, cwd };
  } catch {
    return null; // gone meanwhile
  }
}

function ownsPath(home: string, p: string): boolean {
  return p === home || p.startsWith(`${home}/`) || p.startsWith(`${home} `);
}

// The live processes of `homes`: those whose command line names a file under a home (a session's
// wrapper, the store's process, a daemon) or that work in one, and their descendants (an agent,
// a terminal session's program, which leads a group of its own under its holder). This process
// and its ancestors are never counted.
export function homeProcesses(homeList: string[]): LeakedProcess[] {
  const procs = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const p = readProc(pid);
    if (p && p.state !== 'Z') procs.set(pid, p);
  }
  const mine = new Set<number>();
  for (let pid = process.pid; pid > 1 && !mine.has(pid); pid = procs.get(pid)?.ppid ?? 0) mine.add(pid);
  const children = new Map<number, number[]>();
  for (const p of procs.values()) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const found = new Map<number, string>();
  const visit = (pid: number, home: string) => {
    if (found.has(pid) || mine.has(pid)) return;
    found.set(pid, home);
    for (const c of children.get(pid) ?? []) visit(c, home);
  };
  for (const p of procs.values()) {
    const home = homeList.find((h) => ownsPath(h, p.cwd) || p.args.some((a) => a === h || a.includes(`${h}/`)));
    if (home !== undefined) visit(p.pid, home);
  }
  return [...found].map(([pid, home]) => {
    const p = procs.get(pid)!;
    // a script of many lines (the wrapper's) shown as `…`: what follows it names the session
    return { pid, pgid: p.pgid, cmdline: p.args.map((a) => (a.includes('\n') ? '…' : a)).join(' '), home };
  });
}

// What still runs for `homes`, killed: its process groups (the wrapper leads its session's) and
// itself. A process on its way out (a cleanup's kill just sent) has two seconds to go first.
export async function endLeaks(homeList: string[]): Promise<LeakedProcess[]> {
  let leaked = homeProcesses(homeList);
  for (let waited = 0; leaked.length > 0 && waited < 2000; waited += 100) {
    await delay(100);
    leaked = homeProcesses(homeList);
  }
  if (leaked.length === 0) return [];
  const ownGroup = readProc(process.pid)?.pgid;
  for (const p of leaked) {
    try {
      if (p.pgid !== ownGroup && p.pgid > 1) process.kill(-p.pgid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  for (let waited = 0; homeProcesses(homeList).length > 0 && waited < 5000; waited += 100) await delay(100);
  return leaked;
}

export function describeLeaks(leaked: LeakedProcess[], madeBy: Map<string, string> = new Map()): string {
  const lines = leaked.map((p) => {
    const by = madeBy.get(p.home);
    const cmd = p.cmdline.length > 400 ? `${p.cmdline.slice(0, 400)}…` : p.cmdline;
    return `  pid ${p.pid} (group ${p.pgid}, home ${p.home}${by ? ` of "${by}"` : ''}): ${cmd}`;
  });
  // the file by name: the reporter names this hook by where it was written, not by the test file
  const file = process.argv[1] ? path.relative(process.cwd(), process.argv[1]) : 'this file';
  return `processes left running by the tests of ${file} (killed now; end sessions before their daemon stops):\n${lines.join('\n')}`;
}
