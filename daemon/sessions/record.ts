import { GroveError } from '../errors.ts';
import { isSameProcessAlive } from '../proc/stat.ts';
import type { SessionRecord, SessionsTable } from '../store/sessions.ts';

// A session's row, or NOT_FOUND: what every verb on an id starts with.
export async function findSession(sessions: SessionsTable, id: string): Promise<SessionRecord> {
  const s = await sessions.get(id);
  if (!s) throw new GroveError('NOT_FOUND', `no session with id ${id}`);
  return s;
}

// True while the recorded process (pid and start time) still runs: a pid alone may be reused.
export function stillRuns(rec: SessionRecord): boolean {
  return rec.pid !== null && rec.pid_start !== null && isSameProcessAlive(rec.pid, rec.pid_start);
}
