import { readFileSync } from 'node:fs';
import { isLive } from '../../schemas/session.ts';
import { GroveError } from '../errors.ts';
import { groupMembers } from '../proc/group.ts';
import { GRACE_MS, terminate } from '../proc/terminate.ts';
import type { SessionRecord, SessionsTable } from '../store/sessions.ts';
import type { Interactive } from './interactive.ts';
import type { Live } from './live.ts';
import { findSession, stillRuns } from './record.ts';
import { sessionFiles } from './wrapper.ts';

// The process group a terminal session's program leads (its holder wrote its pid), or null.
function programGroup(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 && groupMembers(pid).length > 0 ? pid : null;
  } catch {
    return null;
  }
}

// Kills sessions: TERM to the whole process group, KILL after the grace time (DESIGN §5).
export function createKill(deps: { sessions: SessionsTable; live: Live; interactive: Pick<Interactive, 'kill'>; dataDir: string }) {
  const { sessions, live } = deps;

  // Stops the group if it is still ours and records the end as `killed`.
  async function stop(rec: SessionRecord, timedOut: boolean): Promise<void> {
    if (rec.kind === 'interactive') return deps.interactive.kill(rec, timedOut);
    const entry = live.get(rec.id);
    const pgid = rec.pid;
    if (pgid !== null) {
      // The wrapper still being the recorded process, or members left in its group, make the
      // group id ours; a group with no members may have been reused, so it is not signalled.
      const ours = stillRuns(rec) || groupMembers(pgid).length > 0;
      // A terminal session's program leads a group of its own under its holder (DESIGN §21): both
      // groups are stopped, or a program that ignores the hangup would outlive the kill.
      const program = rec.interface === 'terminal' && ours ? programGroup(sessionFiles(deps.dataDir, rec.id).ptyPid) : null;
      await Promise.all([ours ? terminate(pgid, { graceMs: GRACE_MS.session }) : null, program !== null ? terminate(program, { graceMs: GRACE_MS.session }) : null]);
    }
    if (entry) await entry.pump.finish({ status: 'killed', exitCode: null, timedOut });
    else await sessions.end(rec.id, 'killed', null, { timedOut });
  }

  // Resolves once the whole group is gone; a second kill of the same session waits on the first.
  // A queued session is cancelled: nothing ever ran (DESIGN §8).
  async function kill(id: string, opts: { timedOut?: boolean } = {}): Promise<{ status: 'killed' }> {
    let rec = await findSession(sessions, id);
    if (rec.status === 'killed') return { status: 'killed' };
    if (rec.status === 'queued') {
      if (await sessions.endQueued(id, 'killed')) {
        live.ended(id);
        return { status: 'killed' };
      }
      rec = await findSession(sessions, id); // started meanwhile: killed as any other
    }
    if (!isLive(rec.status)) {
      throw new GroveError('SESSION_NOT_RUNNING', `session ${id} has already ended (${rec.status})`);
    }
    const entry = live.get(id);
    const killing = entry?.killing ?? stop(rec, opts.timedOut === true);
    if (entry) entry.killing = killing;
    await killing;
    const after = await findSession(sessions, id);
    if (after.status !== 'killed') throw new GroveError('SESSION_NOT_RUNNING', `session ${id} ended (${after.status}) before it was killed`);
    return { status: 'killed' };
  }

  // Every session of a task that runs or waits to (archiving the task); the queued first, so
  // none of them starts when the one before it ends.
  async function killAllOfTask(taskId: string): Promise<void> {
    const all = (await sessions.listOfTask(taskId)) ?? [];
    for (const s of all.filter((s) => s.status === 'queued')) await kill(s.id).catch(() => {});
    await Promise.all(all.filter((s) => isLive(s.status)).map((s) => kill(s.id).catch(() => {})));
  }

  return { kill, killAllOfTask };
}
