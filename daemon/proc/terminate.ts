import { signalGroup, signalProcesses, strayDescendants, waitGone, type Recorded } from './group.ts';

// How long a process group gets between TERM and KILL, by what it runs: a session as DESIGN §5
// says; a setup command (timed out, cancelled, or left by a stopped daemon) a shorter time; a
// git that was stopped (its hooks and filters with it) the time to remove its lock files.
export const GRACE_MS = { session: 5000, setup: 2000, git: 500 } as const;

// After KILL, how long to wait for the kernel to reap the group before giving up on it.
const AFTER_KILL_MS = 5000;

// Stops a process group: TERM to the group and to descendants that left it (setsid), KILL to
// what is left after `graceMs` (at once with 0). Resolves true once everything is gone.
export async function terminate(pgid: number, opts: { graceMs: number }): Promise<boolean> {
  // Taken before the TERM: once their parent dies they can no longer be traced.
  const strays = strayDescendants(pgid);
  if (opts.graceMs > 0) {
    signalGroup(pgid, 'SIGTERM');
    signalProcesses(strays, 'SIGTERM');
    if (await waitGone(pgid, opts.graceMs, strays)) return true;
  }
  signalGroup(pgid, 'SIGKILL');
  signalProcesses(strays, 'SIGKILL');
  return waitGone(pgid, AFTER_KILL_MS, strays);
}

// Stops one recorded process that is not a group's leader (grove takeover's client, which
// passes the TERM on to the agent in its terminal): TERM, then KILL after `graceMs`.
export async function terminateProcess(proc: Recorded, opts: { graceMs: number }): Promise<boolean> {
  signalProcesses([proc], 'SIGTERM');
  if (await waitGone(null, opts.graceMs, [proc])) return true;
  signalProcesses([proc], 'SIGKILL');
  return waitGone(null, AFTER_KILL_MS, [proc]);
}
