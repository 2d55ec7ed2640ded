import { readdirSync, readFileSync } from 'node:fs';
// node:child_process, not execa: one short synchronous `ps` where /proc is missing (macOS).
import { execFileSync } from 'node:child_process';

// One process as the kernel lists it; `start` (ticks since boot on Linux, ps's lstart elsewhere)
// with the pid names one process for its whole life, as a pid alone can be reused.
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  start: string;
}

// /proc/<pid>/stat, the one place it is parsed; null for a zombie or a process that is gone.
function readProcStat(pid: number): ProcInfo | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 2 (comm) may hold spaces and parentheses: count fields after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] state, rest[1] ppid, rest[2] pgrp, rest[19] starttime (field 22)
  if (rest[0] === 'Z' || rest[0] === 'X' || rest[19] === undefined) return null;
  return { pid, ppid: Number(rest[1]), pgid: Number(rest[2]), start: rest[19] };
}

// Every running process (zombies excluded).
export function processTable(): ProcInfo[] {
  if (process.platform === 'linux') {
    const out: ProcInfo[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const p = readProcStat(Number(name));
      if (p) out.push(p);
    }
    return out;
  }
  try {
    return execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart='], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter(([pid, , , stat]) => pid && !stat?.startsWith('Z'))
      .map(([pid, ppid, pgid, , ...lstart]) => ({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), start: lstart.join(' ') }));
  } catch {
    return [];
  }
}

// The start time of a running process, or null when it is gone (or a zombie).
export function processStartTime(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (process.platform === 'linux') return readProcStat(pid)?.start ?? null;
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.trim().split(/\s+/).join(' ') || null;
  } catch {
    return null;
  }
}

// True when the process recorded as (pid, start time) is still the one running under pid.
export function isSameProcessAlive(pid: number, startTime: string): boolean {
  const now = processStartTime(pid);
  return now !== null && now === startTime;
}
