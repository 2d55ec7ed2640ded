// Work that yields the CPU to the supervisor and to the user's own programs: agent sessions and a
// warm pool's setup (DESIGN §16). The daemon answers, stores output and supervises while forty
// agents keep every core busy.
import { writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';

export const LOW_PRIORITY = 10;

// Lowers a process (inherited by what it starts afterwards) and, on Linux, its session's autogroup:
// the kernel shares the CPU between autogroups first, and each setsid makes one, so a niced process
// alone still had one agent's share against the daemon's group. Best effort: where neither can be
// changed (no autogroups, a process already gone) the work runs as it would have.
export function lowerPriority(pid: number): void {
  try {
    setPriority(pid, LOW_PRIORITY);
  } catch {
    // gone, or not ours to change
  }
  if (process.platform !== 'linux') return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(LOW_PRIORITY));
  } catch {
    // a kernel without autogroups
  }
}
