// Work that yields the CPU to everything else: a warm pool's setup (DESIGN §16), prepared ahead of
// a claim. Agents are not lowered (docs/decisions/sessions.md).
import { writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';

export const LOW_PRIORITY = 10;

// Lowers a process (inherited by what it starts afterwards) and, on Linux, its session's autogroup:
// the kernel shares the CPU between autogroups first, and each setsid makes one, so a niced process
// alone still had a whole group's share. Best effort: where neither can be
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
