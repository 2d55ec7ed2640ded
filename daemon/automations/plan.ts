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

// The runs the times in (cursor, now] make. The latest, noticed on time, runs as it is. Missed
// times (the others, or all when the latest is late too) go by the policy: `latest` runs the
// latest within `grace_s`, its `missed` counting the others within it folded in, and makes those
// older than the grace one `skipped` run (`missed` counting them); `skip` makes them all one
// `skipped` run, and only an on-time latest runs. Null: missed times waiting for the machine to
// settle after a wake (unless an on-time run is going anyway).
export function plan(p: PlanInput): Claims | null {
  const { schedule, cursor, now } = p;
  const due = dueIn(schedule, cursor, now);
  const next_run_at = nextTime(schedule, now);
  if (due.latest === null) return { claims: [], cursor, next_run_at };
  const onTime = now.getTime() - due.latest.getTime() <= ON_TIME_MS;
  const done = { cursor: due.latest, next_run_at };
  if (onTime && due.count === 1) return { claims: [{ scheduled_for: due.latest, missed: 0, skipped: null }], ...done };
  if (!p.settled && !onTime) return null;
  if (p.missed.policy === 'skip') {
    const missed = onTime ? dueIn(schedule, cursor, new Date(due.latest.getTime() - 1)) : due;
    const claims: Claims['claims'] = [{ scheduled_for: missed.latest!, missed: missed.count, skipped: 'missed' }];
    if (onTime) claims.push({ scheduled_for: due.latest, missed: 0, skipped: null });
    return { claims, ...done };
  }
  const graceStart = new Date(Math.max(cursor.getTime(), now.getTime() - p.missed.grace_s * 1000));
  const old = dueIn(schedule, cursor, graceStart);
  const recent = dueIn(schedule, graceStart, now);
  const claims: Claims['claims'] = [];
  if (old.latest !== null) claims.push({ scheduled_for: old.latest, missed: old.count, skipped: 'missed' });
  if (recent.latest !== null) claims.push({ scheduled_for: recent.latest, missed: recent.count - 1, skipped: null });
  return { claims, ...done };
}
