import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

// The pids whose process group is `pgid`, zombies excluded.
export function groupMembers(pgid: number): number[] {
  if (process.platform !== 'linux') {
    try {
      return execFileSync('ps', ['-o', 'pid=,stat=', '-g', String(pgid)], { encoding: 'utf8' })
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter(([pid, stat]) => pid && !stat?.startsWith('Z'))
        .map(([pid]) => Number(pid));
    } catch {
      return [];
    }
  }
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // rest[0] = state, rest[2] = pgrp
    if (rest[0] !== 'Z' && rest[0] !== 'X' && Number(rest[2]) === pgid) out.push(Number(name));
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
