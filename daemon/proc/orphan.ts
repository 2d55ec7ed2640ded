import { existsSync } from 'node:fs';
import { isSameProcessAlive } from './stat.ts';
import { groupMembers } from './group.ts';
import { GRACE_MS, terminate } from './terminate.ts';

// Stops a process group that outlived a killed daemon (a setup command's, a hook's). The group
// is ours if its leader still has the recorded start time, or if the leader is gone but members
// remain (the kernel does not hand out a pid while a group of that id exists).
export async function stopOrphanGroup(pid: number | null, pidStart: string | null): Promise<void> {
  if (!pid) return;
  const leaderOurs = pidStart !== null && isSameProcessAlive(pid, pidStart);
  const leaderGone = !leaderOurs && !existsSync(`/proc/${pid}`) && process.platform === 'linux';
  if (!leaderOurs && !(leaderGone && groupMembers(pid).length > 0)) return;
  await terminate(pid, { graceMs: GRACE_MS.setup });
}
