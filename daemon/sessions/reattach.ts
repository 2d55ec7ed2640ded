import type { Logger } from '../runtime/log.ts';
import type { SessionsTable } from '../store/sessions.ts';
import type { Live } from './live.ts';
import { stillRuns } from './record.ts';

// Agents outlive the daemon (DESIGN §5): follow on with those still running, finish the others.
// An agent session still running gets its own socket again (`reopen`): its bridges ask there.
export function createReattach(deps: { sessions: SessionsTable; live: Live; log: Logger; reopen: (sessionId: string) => Promise<void> }) {
  const { sessions, live, log } = deps;
  // A session's process still runs when pid and start time both match; the others end with the
  // wrapper's recorded status, or `lost`.
  // Only this host's: another host's process is not on this machine (its pid may be another's here).
  return async function reattach(hostId: string): Promise<void> {
    for (const rec of await sessions.listLive(hostId)) {
      if (rec.kind === 'interactive') continue; // no files: interactive.ts watches its client
      const entry = live.follow(rec);
      if (!stillRuns(rec)) {
        await entry.pump.finish({});
        continue;
      }
      if (rec.kind === 'agent') await deps.reopen(rec.id);
      // Not our child: nothing tells us when it exits.
      live.watch(rec);
      log.info({ session: rec.id, pid: rec.pid }, 're-attached to running session');
      if (rec.status === 'starting') await sessions.markRunning(rec.id);
    }
  };
}
