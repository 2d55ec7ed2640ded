import { isSameProcessAlive, processTable } from './stat.ts';

// A process recorded with its start time, so that a reused pid is never signalled.
export interface Recorded {
  pid: number;
  start: string;
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
export function strayDescendants(pgid: number): Recorded[] {
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
  const out: Recorded[] = [];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const p = byPid.get(pid);
    if (p && p.pgid !== pgid) out.push({ pid, start: p.start });
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
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

// Signals recorded processes, skipping any whose pid was reused since.
export function signalProcesses(procs: Recorded[], signal: NodeJS.Signals): void {
  for (const p of procs) {
    if (!isSameProcessAlive(p.pid, p.start)) continue;
    try {
      process.kill(p.pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

// How often the process table is looked at while waiting: processes that are not our children
// give no exit event, so there is nothing to wait on but the table itself.
const LOOK_MS = 25;

// Resolves true once the group (if any) and the given processes are all gone, false after `ms`.
export async function waitGone(pgid: number | null, ms: number, procs: Recorded[] = []): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if ((pgid === null || groupMembers(pgid).length === 0) && procs.every((p) => !isSameProcessAlive(p.pid, p.start))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, LOOK_MS));
  }
}
