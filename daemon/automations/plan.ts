// What an automation's due times come to (DESIGN §19), as data: the scheduler claims the result
// under the automation's row lock (store/automation-runs.ts, claimDue).
import type { Missed } from '../../schemas/automation.ts';
import type { Claims } from '../store/automation-runs.ts';
import { dueIn, nextTime, type StoredSchedule } from './schedule.ts';

// A time is on time when it is noticed within this of it; later, it was missed (the daemon was
// down or the machine asleep) and the `missed` policy decides.
export const ON_TIME_MS = 10_000;

export interface PlanInput {
  schedule: StoredSchedule;
  missed: Missed;
  /** the latest scheduled time already dealt with */
  cursor: Date;
  now: Date;
  /** false while the machine has not been awake long enough since a wake: missed times wait */
  settled: boolean;
}

// The runs the times in (cursor, now] make: one on-time run; or, for missed times, with policy
// `latest`, the latest within `grace_s` as a run whose `missed` counts the others within it
// folded in, and those older than the grace as one `skipped` run (`missed` counting them); with
// policy `skip`, one `skipped` run for all. Null: missed times waiting for the machine to settle
// after a wake.
export function plan(p: PlanInput): Claims | null {
  const { schedule, cursor, now } = p;
  const due = dueIn(schedule, cursor, now);
  const next_run_at = nextTime(schedule, now);
  if (due.latest === null) return { claims: [], cursor, next_run_at };
  if (due.count === 1 && now.getTime() - due.latest.getTime() <= ON_TIME_MS) {
    return { claims: [{ scheduled_for: due.latest, missed: 0, skipped: null }], cursor: due.latest, next_run_at };
  }
  if (!p.settled) return null;
  if (p.missed.policy === 'skip') {
    return { claims: [{ scheduled_for: due.latest, missed: due.count, skipped: 'missed' }], cursor: due.latest, next_run_at };
  }
  const graceStart = new Date(Math.max(cursor.getTime(), now.getTime() - p.missed.grace_s * 1000));
  const old = dueIn(schedule, cursor, graceStart);
  const recent = dueIn(schedule, graceStart, now);
  const claims: Claims['claims'] = [];
  if (old.latest !== null) claims.push({ scheduled_for: old.latest, missed: old.count, skipped: 'missed' });
  if (recent.latest !== null) claims.push({ scheduled_for: recent.latest, missed: recent.count - 1, skipped: null });
  return { claims, cursor: due.latest, next_run_at };
}
