import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

// A pid alone can be reused; pid + start time names one process for its whole life.
export function processStartTime(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (process.platform === 'linux') {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return null;
    }
    // Field 2 (comm) may contain spaces and parentheses: count fields after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = rest[0];
    if (state === 'Z' || state === 'X') return null; // a zombie is no longer running
    return rest[19] ?? null; // field 22, starttime in clock ticks since boot
  }
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.trim() || null;
  } catch {
    return null;
  }
}

// True when the process recorded as (pid, startTime) is still the one running under pid.
export function isSameProcessAlive(pid: number, startTime: string): boolean {
  const now = processStartTime(pid);
  return now !== null && now === startTime;
}
