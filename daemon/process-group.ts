import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { isSameProcessAlive, processStartTime } from './proc.ts';

interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
}

// Every running process with its parent and group (zombies excluded).
function processTable(): ProcEntry[] {
  if (process.platform !== 'linux') {
    try {
      return execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat='], { encoding: 'utf8' })
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter(([pid, , , stat]) => pid && !stat?.startsWith('Z'))
        .map(([pid, ppid, pgid]) => ({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid) }));
    } catch {
      return [];
    }
  }
  const out: ProcEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // rest[0] = state, rest[1] = ppid, rest[2] = pgrp
    if (rest[0] === 'Z' || rest[0] === 'X') continue;
    out.push({ pid: Number(name), ppid: Number(rest[1]), pgid: Number(rest[2]) });
  }
  return out;
}

// The pids whose process group is `pgid`, zombies excluded.
export function groupMembers(pgid: number): number[] {
  return processTable()
    .filter((p) => p.pgid === pgid)
    .map((p) => p.pid);
}

// Descendants of the group's members that left the group (setsid, setpgid): a group signal
// misses them, but their parent chain still leads back. One whose parent has already exited
// was re-parented to init and can no longer be traced to the group.
export function strayDescendants(pgid: number): Array<{ pid: number; start: string }> {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const p of table) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const byPid = new Map(table.map((p) => [p.pid, p]));
  const seen = new Set<number>();
  const queue = table.filter((p) => p.pgid === pgid).map((p) => p.pid);
  const out: Array<{ pid: number; start: string }> = [];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const p = byPid.get(pid);
    if (p && p.pgid !== pgid) {
      const start = processStartTime(pid);
      if (start !== null) out.push({ pid, start });
    }
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

// Signals processes recorded as (pid, start time), skipping any whose pid was reused since.
export function signalProcesses(procs: Array<{ pid: number; start: string }>, signal: NodeJS.Signals): void {
  for (const p of procs) {
    if (!isSameProcessAlive(p.pid, p.start)) continue;
    try {
      process.kill(p.pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

// Resolves true once the group and the given processes are all gone, false at the deadline.
export async function waitAllGone(pgid: number, procs: Array<{ pid: number; start: string }>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (groupMembers(pgid).length === 0 && procs.every((p) => !isSameProcessAlive(p.pid, p.start))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

// Sends `signal` to the whole group; false when the group is gone.
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

// Resolves true once no process is left in the group, false at the deadline. A process that is
// not our child gives no exit event, so this looks at the process table every 25 ms.
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}
